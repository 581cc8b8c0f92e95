"""The Celery tasks: thin. Parse the id, hand it to this process's WorkerHost, return how it went."""

from __future__ import annotations

from celery import shared_task

from worker.queues.dispatch import RUN_BATCH_TASK, RUN_TASK


@shared_task(name=RUN_TASK, ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def run(invocation_id: str, where: list[str] | None = None) -> str:
    """Hand one invocation to this process's event loop (see worker.queues.celery_app for the ack semantics).

    ``where``: the invocation's ``[app, user, session]`` when the sender knew it (saves a lookup).
    """
    from worker.running import host

    return host.current().run_job(str(invocation_id), where)


@shared_task(name=RUN_BATCH_TASK, ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def run_batch(jobs: list[list]) -> str:
    """Hand several invocations to this process's event loop: ``jobs`` of ``[invocation_id]`` or
    ``[invocation_id, [app, user, session]]``, as ``worker.queues.dispatch`` batches them."""
    from worker.running import host

    current = host.current()
    for job in jobs:
        current.run_job(str(job[0]), job[1] if len(job) > 1 else None)
    return f"handed over {len(jobs)}"
