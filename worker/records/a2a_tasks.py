"""The A2A tasks of ``api.a2a`` in Redis: the SDK saves each task whole (JSON), any API process reads it back.

A task's id is the agentq invocation id it runs as; its copy here is kept as long as settled invocations are
(``AGENTQ_RETENTION_SETTLED``), so ``tasks/get`` answers on any API process after a restart, as the invocation's
own record does.
"""

from __future__ import annotations

import time
from typing import Any

from runtime.redis_store import keys


async def save(store: Any, app: str, task_id: str, data: str) -> None:
    ttl_s = max(1, int(store.retention.settled_s))
    pipe = store.redis.pipeline(transaction=True)
    pipe.set(keys.a2a_task(app, task_id), data, ex=ttl_s)
    pipe.zadd(keys.a2a_tasks(app), {task_id: int(time.time() * 1000)})
    pipe.zremrangebyscore(keys.a2a_tasks(app), 0, int((time.time() - ttl_s) * 1000))  # expired ones
    await pipe.execute()


async def get(store: Any, app: str, task_id: str) -> str | None:
    return await store.redis.get(keys.a2a_task(app, task_id))


async def newest(store: Any, app: str, count: int) -> list[str]:
    """Up to ``count`` of the app's tasks, most recently saved first."""
    ids = await store.redis.zrevrange(keys.a2a_tasks(app), 0, count - 1)
    if not ids:
        return []
    found = await store.redis.mget([keys.a2a_task(app, i) for i in ids])
    return [data for data in found if data is not None]


async def delete(store: Any, app: str, task_id: str) -> None:
    pipe = store.redis.pipeline(transaction=True)
    pipe.delete(keys.a2a_task(app, task_id))
    pipe.zrem(keys.a2a_tasks(app), task_id)
    await pipe.execute()
