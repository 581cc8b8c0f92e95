"""worker.queues.dispatch: run jobs go to their app's queue (worker.config.run_queues); the jobs of one queue sent in one loop
iteration go out as one Celery task; the publish runs off the event loop, and jobs sent while one is on its way go
out together in the next; a failed send is left to the dispatch watchdog."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading

import pytest

from runtime.errors import UsageError
from worker.config.run_queues import RunQueues
from worker.queues.dispatch import QUEUE, RUN_BATCH_TASK, RUN_TASK, Dispatcher


class RecordingApp:
    """Stands in for the Celery app: remembers each send_task call, or fails them all."""

    def __init__(self, fail: bool = False):
        self.calls: list[tuple] = []
        self.fail = fail

    def send_task(self, name, args, queue):
        if self.fail:
            raise ConnectionError("broker unreachable")
        self.calls.append((name, args, queue))


async def test_jobs_of_one_app_sent_in_the_same_loop_iteration_go_out_as_one_batch_task_on_its_queue():
    app = RecordingApp()
    dispatcher = Dispatcher(app, queues=RunQueues())
    await asyncio.gather(dispatcher.send("e-1", ["weather", "ann", "s1"]), dispatcher.send("e-2", ["weather", "bo", "s2"]))
    await dispatcher.send("e-3", ["weather", "ann", "s3"])
    assert app.calls == [
        (RUN_BATCH_TASK, [[["e-1", ["weather", "ann", "s1"]], ["e-2", ["weather", "bo", "s2"]]]], "agentq.app.weather"),
        (RUN_TASK, ["e-3", ["weather", "ann", "s3"]], "agentq.app.weather")]


class SlowBroker(RecordingApp):
    """A broker whose first publish waits until the test lets it through (at most 5 s: a loop the publish
    blocks cannot let it through, and the test then fails on what was sent rather than hanging)."""

    def __init__(self):
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def send_task(self, name, args, queue):
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(timeout=5)
        super().send_task(name, args, queue)


async def test_the_loop_keeps_serving_while_a_publish_waits_on_the_broker_and_jobs_sent_meanwhile_go_out_together():
    app = SlowBroker()
    dispatcher = Dispatcher(app, queues=RunQueues())
    first = asyncio.ensure_future(dispatcher.send("e-1", ["weather", "ann", "s1"]))
    while not app.entered.is_set():
        await asyncio.sleep(0)
    later = [asyncio.ensure_future(dispatcher.send(f"e-{i}", ["weather", "ann", f"s{i}"])) for i in (2, 3)]
    for _ in range(20):  # the loop runs on while the first publish waits on the broker
        await asyncio.sleep(0)
    assert app.calls == [] and not first.done() and not any(task.done() for task in later)
    app.release.set()
    await asyncio.gather(first, *later)
    assert app.calls == [
        (RUN_TASK, ["e-1", ["weather", "ann", "s1"]], "agentq.app.weather"),
        (RUN_BATCH_TASK, [[["e-2", ["weather", "ann", "s2"]], ["e-3", ["weather", "ann", "s3"]]]], "agentq.app.weather")]


def _send_in_forked_child(dispatcher: Dispatcher, sent) -> None:
    async def send() -> None:
        async with asyncio.timeout(10):  # a publish handed to a thread the fork did not copy never ends
            await dispatcher.send("e-child", ["weather", "ann", "s2"])

    asyncio.run(send())
    sent.put(dispatcher.app.calls)


def test_a_dispatcher_used_before_a_fork_still_publishes_in_the_forked_child():
    dispatcher = Dispatcher(RecordingApp(), queues=RunQueues())
    asyncio.run(dispatcher.send("e-parent", ["weather", "ann", "s1"]))  # the parent's publishing thread exists
    fork = multiprocessing.get_context("fork")
    sent = fork.Queue()
    child = fork.Process(target=_send_in_forked_child, args=(dispatcher, sent))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert sent.get(timeout=5)[-1] == (RUN_TASK, ["e-child", ["weather", "ann", "s2"]], "agentq.app.weather")


async def test_jobs_of_different_apps_go_to_their_own_queues_and_a_job_of_no_known_app_to_the_shared_one():
    app = RecordingApp()
    dispatcher = Dispatcher(app, queues=RunQueues())
    await asyncio.gather(dispatcher.send("e-1", ["weather", "ann", "s1"]), dispatcher.send("e-2", ["reports", "ann", "s2"]),
                         dispatcher.send("e-3"), dispatcher.send("e-4", ["weather", "ann", "s4"]))
    assert sorted(app.calls, key=lambda call: call[2]) == [
        (RUN_TASK, ["e-3"], QUEUE),
        (RUN_TASK, ["e-2", ["reports", "ann", "s2"]], "agentq.app.reports"),
        (RUN_BATCH_TASK, [[["e-1", ["weather", "ann", "s1"]], ["e-4", ["weather", "ann", "s4"]]]], "agentq.app.weather")]


async def test_apps_of_one_group_share_its_queue_and_batch_together():
    app = RecordingApp()
    dispatcher = Dispatcher(app, queues=RunQueues.from_env({"AGENTQ_APP_QUEUES": "weather=interactive, maps=interactive"}))
    await asyncio.gather(dispatcher.send("e-1", ["weather", "ann", "s1"]), dispatcher.send("e-2", ["maps", "ann", "s2"]))
    assert app.calls == [(RUN_BATCH_TASK, [[["e-1", ["weather", "ann", "s1"]], ["e-2", ["maps", "ann", "s2"]]]],
                          "agentq.group.interactive")]


def test_a_worker_consumes_the_shared_queue_and_one_queue_per_app_or_group():
    queues = RunQueues(groups={"weather": "interactive", "maps": "interactive"})
    assert queues.queues_for(["reports", "weather", "maps"]) == {
        QUEUE: ["maps", "reports", "weather"],
        "agentq.group.interactive": ["maps", "weather"],
        "agentq.app.reports": ["reports"]}


@pytest.mark.parametrize(("raw", "message"), [
    ("weather", "AGENTQ_APP_QUEUES must be app=value pairs separated by commas, such as "
                "weather=interactive,reports=bulk; got 'weather'"),
    ("weather=inter active", "AGENTQ_APP_QUEUES entry for app 'weather' must be a group name of letters, digits, "
                             "'_' or '-', got 'inter active'"),
    ("weather=a,weather=b", "AGENTQ_APP_QUEUES names app 'weather' twice"),
])
def test_a_bad_app_queues_setting_is_refused_naming_the_entry(raw, message):
    with pytest.raises(UsageError) as caught:
        RunQueues.from_env({"AGENTQ_APP_QUEUES": raw})
    assert str(caught.value) == message


async def test_a_send_the_broker_refuses_is_logged_and_left_to_the_watchdog(caplog):
    dispatcher = Dispatcher(RecordingApp(fail=True), queues=RunQueues())
    with caplog.at_level(logging.WARNING, logger="agentq.worker"):
        await dispatcher.send("e-lost")
    assert [record.getMessage() for record in caplog.records] == [
        "run jobs of invocations ['e-lost'] not sent (the dispatch watchdog sends them again in 5s): "
        "ConnectionError('broker unreachable')"]
