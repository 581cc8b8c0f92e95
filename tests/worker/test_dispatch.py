"""worker.dispatch: run jobs sent in one loop iteration go out as one Celery task; a failed send is left to
the dispatch watchdog."""

from __future__ import annotations

import asyncio
import logging

from worker.dispatch import QUEUE, RUN_BATCH_TASK, RUN_TASK, Dispatcher


class RecordingApp:
    """Stands in for the Celery app: remembers each send_task call, or fails them all."""

    def __init__(self, fail: bool = False):
        self.calls: list[tuple] = []
        self.fail = fail

    def send_task(self, name, args, queue):
        if self.fail:
            raise ConnectionError("broker unreachable")
        self.calls.append((name, args, queue))


async def test_jobs_sent_in_the_same_loop_iteration_go_out_as_one_batch_task():
    app = RecordingApp()
    dispatcher = Dispatcher(app)
    await asyncio.gather(dispatcher.send("e-1", ["weather", "ann", "s1"]), dispatcher.send("e-2"))
    await dispatcher.send("e-3", ["weather", "ann", "s3"])
    assert app.calls == [(RUN_BATCH_TASK, [[["e-1", ["weather", "ann", "s1"]], ["e-2"]]], QUEUE),
                         (RUN_TASK, ["e-3", ["weather", "ann", "s3"]], QUEUE)]


async def test_a_send_the_broker_refuses_is_logged_and_left_to_the_watchdog(caplog):
    dispatcher = Dispatcher(RecordingApp(fail=True))
    with caplog.at_level(logging.WARNING, logger="agentq.worker"):
        await dispatcher.send("e-lost")
    assert [record.getMessage() for record in caplog.records] == [
        "run jobs of invocations ['e-lost'] not sent (the dispatch watchdog sends them again in 5s): "
        "ConnectionError('broker unreachable')"]
