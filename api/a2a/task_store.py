"""The A2A SDK's TaskStore on agentq's Redis (through the client), so every API process sees every task."""

from __future__ import annotations

from typing import Any

from a2a.server.tasks import TaskStore
from a2a.types import ListTasksResponse, Task
from google.protobuf import json_format

MAX_LISTED = 100


class RedisTaskStore(TaskStore):
    """Tasks of one app, saved whole as JSON (``worker.a2a_tasks``)."""

    def __init__(self, client: Any, app: str):
        self.client = client
        self.app = app

    async def save(self, task: Task, context: Any = None) -> None:
        await self.client.a2a_tasks.keep(self.app, task.id, json_format.MessageToJson(task))

    async def get(self, task_id: str, context: Any = None) -> Task | None:
        data = await self.client.a2a_tasks.fetch(self.app, task_id)
        return None if data is None else json_format.Parse(data, Task())

    async def list(self, params: Any, context: Any = None) -> ListTasksResponse:
        size = min(params.page_size or MAX_LISTED, MAX_LISTED)
        tasks = [json_format.Parse(data, Task()) for data in await self.client.a2a_tasks.newest(self.app, size)]
        if params.context_id:
            tasks = [task for task in tasks if task.context_id == params.context_id]
        return ListTasksResponse(tasks=tasks, page_size=size, total_size=len(tasks))

    async def delete(self, task_id: str, context: Any = None) -> None:
        await self.client.a2a_tasks.forget(self.app, task_id)
