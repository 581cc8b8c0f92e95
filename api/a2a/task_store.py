"""The A2A SDK's TaskStore on agentq's Redis (through the client), so every API process sees every task.

A caller sees only the tasks of users its key may touch: any other task is absent (the SDK then answers
TaskNotFoundError, the A2A equivalent of HTTP's 404), for ``tasks/get``, ``tasks/list``, ``tasks/cancel`` and a
message answering the task alike. The task's user is in its metadata (``OWNER``, written when it is submitted);
a task saved without it is scoped by its invocation's record.
"""

from __future__ import annotations

from typing import Any

from a2a.server.tasks import TaskStore
from a2a.types import ListTasksResponse, Task
from google.protobuf import json_format

from api.a2a.executor import OWNER, caller_of
from runtime.errors import InvocationNotFoundError

MAX_LISTED = 100


class RedisTaskStore(TaskStore):
    """Tasks of one app, saved whole as JSON (``worker.records.a2a_tasks``)."""

    def __init__(self, client: Any, app: str):
        self.client = client
        self.app = app

    async def save(self, task: Task, context: Any = None) -> None:
        await self.client.a2a_tasks.keep(self.app, task.id, json_format.MessageToJson(task))

    async def get(self, task_id: str, context: Any = None) -> Task | None:
        data = await self.client.a2a_tasks.fetch(self.app, task_id)
        if data is None:
            return None
        task = json_format.Parse(data, Task())
        return task if await self._visible(task, context) else None

    async def list(self, params: Any, context: Any = None) -> ListTasksResponse:
        size = min(params.page_size or MAX_LISTED, MAX_LISTED)
        tasks = [json_format.Parse(data, Task()) for data in await self.client.a2a_tasks.newest(self.app, size)]
        if params.context_id:
            tasks = [task for task in tasks if task.context_id == params.context_id]
        tasks = [task for task in tasks if await self._visible(task, context)]
        return ListTasksResponse(tasks=tasks, page_size=size, total_size=len(tasks))

    async def delete(self, task_id: str, context: Any = None) -> None:
        await self.client.a2a_tasks.forget(self.app, task_id)

    async def _visible(self, task: Task, context: Any) -> bool:
        """True when the request's caller may touch the task's user (always for the SDK's own calls)."""
        caller = caller_of(context)
        if caller is None or caller.grant is None or caller.grant.reaches_everything:
            return True
        owner = task.metadata[OWNER] if OWNER in task.metadata else None
        if owner is None:
            try:
                owner = (await self.client.get(task.id)).user_id
            except InvocationNotFoundError:
                return False
        return caller.allows(self.app, str(owner))
