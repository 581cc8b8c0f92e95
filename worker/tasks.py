"""The Celery tasks: thin. Parse the id, hand it to this process's WorkerHost, return how it went."""

from __future__ import annotations

from celery import shared_task

from .dispatch import RUN_TASK


@shared_task(name=RUN_TASK, ignore_result=True, acks_late=True, reject_on_worker_lost=True,
             Strategy="worker.strategy:handoff")
def run(invocation_id: str, where: list[str] | None = None) -> str:
    """Hand one invocation to this process's event loop (see worker.celery_app for the ack semantics).

    ``where``: the invocation's ``[app, user, session]`` when the sender knew it (saves a lookup).
    """
    from . import host

    return host.current().run_job(str(invocation_id), where)
