"""Celery run-job messages written straight into a Redis pipeline, beside the writes that make them necessary.

``Celery.send_task`` costs about a millisecond of Python per message and its own round trips; a run job is always
the same task with one string argument, so the enqueue and resume paths build the Celery protocol-2 message (as
kombu's Redis transport stores it: an LPUSH onto the queue's list) and the ``task-sent`` event (a PUBLISH on the
``celeryev`` fanout, as ``task_send_sent_event`` would) from a template and send both in the pipeline that
already carries the record update: no extra round trip. Workers consume them with plain Celery.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import time
import uuid

from .dispatch import QUEUE, RUN_TASK

_HOSTNAME = f"gen{os.getpid()}@{socket.gethostname()}"
_REPLY_TO = str(uuid.uuid4())
_EVENT_CHANNEL = "/{db}.celeryev/task.sent"


def run_job(invocation_id: str, where: list[str] | None = None) -> tuple[str, str]:
    """``(task_id, message)``: the kombu/Redis JSON of a Celery ``agentq.run`` job for ``invocation_id``
    (``where``: its ``[app, user, session]``, which spares the worker a lookup)."""
    task_id = str(uuid.uuid4())
    args: list = [invocation_id, where] if where else [invocation_id]
    body = json.dumps([args, {}, {"callbacks": None, "errbacks": None, "chain": None, "chord": None}])
    message = {
        "body": base64.b64encode(body.encode()).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": {
            "lang": "py", "task": RUN_TASK, "id": task_id, "shadow": None, "eta": None, "expires": None,
            "group": None, "group_index": None, "retries": 0, "timelimit": [None, None], "root_id": task_id,
            "parent_id": None, "argsrepr": repr(args), "kwargsrepr": "{}", "origin": _HOSTNAME,
            "ignore_result": True, "replaced_task_nesting": 0, "stamped_headers": None, "stamps": {},
        },
        "properties": {
            "correlation_id": task_id, "reply_to": _REPLY_TO, "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": QUEUE}, "priority": 0, "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    return task_id, json.dumps(message)


def sent_event(task_id: str, args: list) -> str:
    """The ``task-sent`` event message for Flower and other event consumers."""
    event = {
        "hostname": _HOSTNAME, "utcoffset": 0, "pid": os.getpid(), "clock": 0, "uuid": task_id,
        "root_id": task_id, "parent_id": None, "name": RUN_TASK, "args": repr(args), "kwargs": "{}",
        "retries": 0, "eta": None, "expires": None, "queue": QUEUE, "exchange": "", "routing_key": QUEUE,
        "timestamp": time.time(), "type": "task-sent",
    }
    return json.dumps({
        "body": base64.b64encode(json.dumps(event).encode()).decode(),
        "content-encoding": "utf-8", "content-type": "application/json", "headers": {"hostname": _HOSTNAME},
        "properties": {"delivery_mode": 1, "delivery_info": {"exchange": "celeryev", "routing_key": "task.sent"},
                       "priority": 0, "body_encoding": "base64", "delivery_tag": str(uuid.uuid4())},
    })


def run_job_commands(invocation_id: str, db: int = 0, where: list[str] | None = None) -> list[tuple]:
    """The Redis commands that send the run job and its task-sent event."""
    task_id, message = run_job(invocation_id, where)
    args = [invocation_id, where] if where else [invocation_id]
    return [("LPUSH", QUEUE, message), ("PUBLISH", _EVENT_CHANNEL.format(db=db), sent_event(task_id, args))]
