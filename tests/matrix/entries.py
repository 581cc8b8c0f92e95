"""The matrix's entry points: how each door starts a flow, answers its parked calls, and is tried by callers
who must be refused (a key without the role, a key scoped to another user, the requester confirming itself).

Every entry point runs against the same real stack (``tests/matrix/test_matrix.py``); each records what each
refused attempt got and whether it wrote anything, and the test module asserts on that record.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from agentq.local_stack import LocalStack

REQUESTER, APPROVER, READER, EVE = "requester", "approver", "reader", "eve"
"""Principals: starts runs (enqueue, read, answer); answers (read, answer: over every entry point, ``/run_sse``
included); only reads; every role but only for user ``eve``."""
SECRETS = {name: f"matrix-{name}-secret-0001" for name in (REQUESTER, APPROVER, READER, EVE)}
ROLES = {REQUESTER: ["enqueue", "read", "answer"], APPROVER: ["read", "answer"], READER: ["read"],
         EVE: ["enqueue", "read", "answer", "operate"]}


def keys_json() -> dict:
    """AGENTQ_API_KEYS: one named key per principal (named keys have an identity, so separation of duties holds)."""
    from api.access.auth import hash_secret

    return {name: {"sha256": hash_secret(SECRETS[name]), "users": ["eve"] if name == EVE else ["*"],
                   "apps": ["*"], "roles": ROLES[name]} for name in SECRETS}


@dataclass
class Attempt:
    """One call that must be refused: what was tried, what it got, whether it was refused and wrote nothing."""

    guard: str
    """``role``, ``scope`` or ``separation``."""
    what: str
    got: Any
    refused: bool
    wrote_nothing: bool | None = None

    @property
    def held(self) -> bool:
        return self.refused and self.wrote_nothing is not False


@dataclass
class Cell:
    """One flow through one entry point: its app, user and session, and what the guards saw on the way."""

    stack: LocalStack
    client: Any
    """An AgentqClient on the stack's Redis (reads, and the Python client entry point's writes)."""
    app: str
    user: str
    session_id: str
    message: str
    attempts: list[Attempt] = field(default_factory=list)
    invocation_id: str | None = None

    def http(self, principal: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.stack.base_url, timeout=60,
                                 headers={"Authorization": f"Bearer {SECRETS[principal]}"})

    @property
    def session_path(self) -> str:
        return f"/apps/{self.app}/users/{self.user}/sessions/{self.session_id}"

    async def nothing_started(self) -> bool:
        """No invocation of the cell's user in its app, and its session (if any) holds no event."""
        if await self.client.list_invocations(self.app, self.user):
            return False
        async with self.http(REQUESTER) as http:
            session = await http.get(self.session_path)
        return session.status_code == 404 or not session.json().get("events")


def user_message(text: str) -> dict:
    return {"role": "user", "parts": [{"text": text}]}


class Entry:
    """One door. ``answers_over`` is the entry point a person answers through (``None``: the Python client)."""

    name = ""
    user_for_cell = "u-"
    guards_start = True
    approver = APPROVER
    """Who answers the parked calls once the refused callers have tried."""

    def user(self, flow: str) -> str:
        """The user a cell runs as: one per entry point, so each (app, user) scope holds one cell's records."""
        return f"{self.user_for_cell}{self.name}"

    async def prepare(self, cell: Cell) -> None:
        """Make the cell's session (as the requester)."""
        async with cell.http(REQUESTER) as http:
            made = await http.post(f"/apps/{cell.app}/users/{cell.user}/sessions", json={"sessionId": cell.session_id})
            assert made.status_code == 200, made.text

    async def refuse_start(self, cell: Cell) -> None:
        """Try to start the flow as the reader (no ``enqueue``) and as eve (another user's scope)."""

    async def start(self, cell: Cell) -> str:
        raise NotImplementedError

    async def answer(self, cell: Cell, principal: str, responses: list[dict]) -> tuple[bool, Any]:
        """(accepted, what came back) for ``principal`` answering the parked invocation with ``responses``."""
        async with cell.http(principal) as http:
            answered = await http.post(f"/invocations/{cell.invocation_id}/function-responses",
                                       json={"functionResponses": responses})
        return answered.status_code == 202, f"{answered.status_code} {answered.text[:300]}"

    async def session(self, cell: Cell) -> tuple[list[dict], dict]:
        """The committed events (by-alias JSON) and state of the cell's session, as the requester reads them."""
        async with cell.http(REQUESTER) as http:
            found = await http.get(cell.session_path)
        assert found.status_code == 200, found.text
        body = found.json()
        return body["events"], body["state"]


async def _refused_post(cell: Cell, guard: str, principal: str, path: str, body: dict, expected: int) -> None:
    async with cell.http(principal) as http:
        got = await http.post(path, json=body)
    cell.attempts.append(Attempt(guard, f"{principal} POST {path}", f"{got.status_code} {got.text[:200]}",
                                 got.status_code == expected, await cell.nothing_started()))


class HttpInvocations(Entry):
    """``POST .../invocations``, answered with ``POST /invocations/{id}/function-responses``."""

    name = "http"

    async def refuse_start(self, cell: Cell) -> None:
        body = {"newMessage": user_message(cell.message)}
        await _refused_post(cell, "role", READER, cell.session_path + "/invocations", body, 403)
        await _refused_post(cell, "scope", EVE, cell.session_path + "/invocations", body, 404)

    async def start(self, cell: Cell) -> str:
        async with cell.http(REQUESTER) as http:
            started = await http.post(cell.session_path + "/invocations",
                                      json={"newMessage": user_message(cell.message)})
        assert started.status_code == 202, started.text
        return started.json()["invocationId"]


class RunSse(Entry):
    """ADK's ``POST /run_sse``; a message of FunctionResponses to it answers the parked calls."""

    name = "run_sse"

    def body(self, cell: Cell, message: dict) -> dict:
        return {"appName": cell.app, "userId": cell.user, "sessionId": cell.session_id, "newMessage": message}

    async def refuse_start(self, cell: Cell) -> None:
        body = self.body(cell, user_message(cell.message))
        await _refused_post(cell, "role", READER, "/run_sse", body, 403)
        await _refused_post(cell, "scope", EVE, "/run_sse", body, 404)

    async def _run(self, cell: Cell, principal: str, message: dict) -> httpx.Response:
        async with cell.http(principal) as http, http.stream("POST", "/run_sse", json=self.body(cell, message)) as sse:
            await sse.aread()  # the stream ends when the invocation parks or settles
        return sse

    async def start(self, cell: Cell) -> str:
        started = await self._run(cell, REQUESTER, user_message(cell.message))
        assert started.status_code == 200, started.text
        return started.headers["X-Invocation-Id"]

    async def answer(self, cell: Cell, principal: str, responses: list[dict]) -> tuple[bool, Any]:
        message = {"role": "user", "parts": [{"functionResponse": response} for response in responses]}
        answered = await self._run(cell, principal, message)
        return answered.status_code == 200, f"{answered.status_code} {answered.text[:300]}"


class Schedule(Entry):
    """A schedule made over HTTP and fired by its ``trigger`` (the same Lua step as a tick); answered over HTTP.

    A tick has no caller to refuse: the guarded doors are the schedule's creation and its trigger."""

    name = "schedule"

    def spec(self, cell: Cell) -> dict:
        # ticks far in the future: only the trigger fires it, while the test watches
        return {"id": f"s-{cell.session_id}", "intervalS": 86_400, "startAt": time.time() + 300 * 86_400,
                "newMessage": cell.message, "sessionId": cell.session_id}

    def schedules(self, cell: Cell) -> str:
        return f"/apps/{cell.app}/users/{cell.user}/schedules"

    async def prepare(self, cell: Cell) -> None:
        """The session is made with the schedule (in ``refuse_start``, once the refused creations are tried)."""

    async def refuse_start(self, cell: Cell) -> None:
        await self.refuse_creation(cell)
        trigger = f"{self.schedules(cell)}/s-{cell.session_id}/trigger"
        await _refused_post(cell, "role", READER, trigger, {}, 403)
        await _refused_post(cell, "scope", EVE, trigger, {}, 404)

    async def refuse_creation(self, cell: Cell) -> None:
        """The reader and eve try to make the schedule, then the requester makes it."""
        await _refused_post(cell, "role", READER, self.schedules(cell), self.spec(cell), 403)
        await _refused_post(cell, "scope", EVE, self.schedules(cell), self.spec(cell), 404)
        async with cell.http(REQUESTER) as http:
            listed = await http.get(self.schedules(cell))
            assert listed.json()["schedules"] == [], "a refused creation left a schedule"
            made = await http.post(self.schedules(cell), json=self.spec(cell))
            assert made.status_code == 201, made.text

    async def start(self, cell: Cell) -> str:
        async with cell.http(REQUESTER) as http:
            fired = await http.post(f"{self.schedules(cell)}/s-{cell.session_id}/trigger")
        assert fired.status_code == 202, fired.text
        return fired.json()["invocationId"]


class ScheduleTick(Schedule):
    """A schedule whose first tick is due at once, fired by a real ``agentq scheduler`` process (the stack runs
    one); the only guarded door is its creation (a trigger would fire a second run)."""

    name = "tick"
    FIRST_RUN_S = 60
    """How long the first run may take to appear: the scheduler looks every 0.25 s; a loaded machine is slow."""

    def spec(self, cell: Cell) -> dict:
        # ticks every day from a day ago, less half a second: the first tick after the creation is due at once
        # (a start at "now" would be passed by the time the schedule is made, and its first tick be tomorrow)
        return {**super().spec(cell), "startAt": time.time() - 86_400 + 0.5}

    async def refuse_start(self, cell: Cell) -> None:
        await self.refuse_creation(cell)

    async def start(self, cell: Cell) -> str:
        deadline = time.monotonic() + self.FIRST_RUN_S
        async with cell.http(REQUESTER) as http:
            while True:
                runs = (await http.get(f"{self.schedules(cell)}/s-{cell.session_id}/runs")).json()["runs"]
                if runs:
                    return runs[-1]["invocationId"]
                assert time.monotonic() < deadline, f"the scheduler fired no tick of s-{cell.session_id}"
                await asyncio.sleep(0.1)


class PythonClient(Entry):
    """``worker.client.AgentqClient`` on the deployment's Redis: its caller is the local operator (``cli:<user>``),
    so there is no key to refuse and no approval rule (those are the API's)."""

    name = "client"
    guards_start = False

    async def prepare(self, cell: Cell) -> None:
        await cell.client.create_session(cell.app, cell.user, cell.session_id)

    async def start(self, cell: Cell) -> str:
        return await cell.client.enqueue(cell.app, cell.user, cell.session_id, cell.message)

    async def answer(self, cell: Cell, principal: str, responses: list[dict]) -> tuple[bool, Any]:
        record = await cell.client.respond(cell.invocation_id, responses)
        return True, record.status

    async def session(self, cell: Cell) -> tuple[list[dict], dict]:
        found = await cell.client.session_service.get_session(app_name=cell.app, user_id=cell.user,
                                                             session_id=cell.session_id)
        return [event.model_dump(mode="json", by_alias=True, exclude_none=True) for event in found.events], dict(
            found.state)


class A2A(Entry):
    """The a2a-sdk client: ``message/send`` starts a task (its id is the invocation's, its context the session),
    a message on the task answers it. The A2A user is the caller's principal, so the cell's user is the
    requester; eve (scoped to user ``eve``) tries to read and answer the requester's task."""

    name = "a2a"

    def user(self, flow: str) -> str:
        return REQUESTER

    async def prepare(self, cell: Cell) -> None:
        """The A2A context's session is made by the task's first message."""

    async def _client(self, cell: Cell, principal: str):
        from a2a.client import ClientConfig, create_client

        http = httpx.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {SECRETS[principal]}"})
        return await create_client(f"{cell.stack.base_url}/a2a/{cell.app}",
                                   client_config=ClientConfig(streaming=False, httpx_client=http),
                                   relative_card_path=".well-known/agent-card.json")

    async def _send(self, cell: Cell, principal: str, parts: list, task_id: str = "", context_id: str = ""):
        from a2a.types import Message, Role, SendMessageRequest

        client = await self._client(cell, principal)
        request = SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                                     parts=parts, task_id=task_id, context_id=context_id))
        task = None
        async for response in client.send_message(request):
            if response.WhichOneof("payload") == "task":
                task = response.task
        return task

    async def refuse_start(self, cell: Cell) -> None:
        from a2a.types import Part

        context = str(uuid.uuid4())
        try:
            got, refused = await self._send(cell, READER, [Part(text=cell.message)], context_id=context), False
        except Exception as exc:  # noqa: BLE001 - the SDK raises the server's JSON-RPC error
            got, refused = f"{type(exc).__name__}: {exc}", True
        written = await cell.client.list_invocations(cell.app, READER)
        cell.attempts.append(Attempt("role", "reader message/send", str(got)[:300], refused, not written))

    async def refuse_after_start(self, cell: Cell) -> None:
        """Eve reads the requester's task (tasks/get) and cancels it: both refused, the task unchanged."""
        from a2a.types import GetTaskRequest

        client = await self._client(cell, EVE)
        try:
            got, refused = await client.get_task(GetTaskRequest(id=cell.invocation_id)), False
        except Exception as exc:  # noqa: BLE001
            got, refused = f"{type(exc).__name__}: {exc}", True
        cell.attempts.append(Attempt("scope", "eve tasks/get", str(got)[:300], refused, None))

    async def start(self, cell: Cell) -> str:
        from a2a.types import Part

        task = await self._send(cell, REQUESTER, [Part(text=cell.message)], context_id=cell.session_id)
        return task.id

    async def answer(self, cell: Cell, principal: str, responses: list[dict]) -> tuple[bool, Any]:
        from a2a.types import Part
        from google.protobuf import json_format, struct_pb2

        [response] = responses  # the flows park on one call at a time
        data = struct_pb2.Value()
        json_format.ParseDict({"callId": response["id"], "response": response["response"]}, data)
        try:
            task = await self._send(cell, principal, [Part(data=data)], task_id=cell.invocation_id,
                                    context_id=cell.session_id)
        except Exception as exc:  # noqa: BLE001 - a refusal is the server's JSON-RPC error
            return False, f"{type(exc).__name__}: {exc}"
        return True, task.status.state if task is not None else None


ENTRIES: dict[str, Entry] = {entry.name: entry for entry in (HttpInvocations(), RunSse(), A2A(), Schedule(),
                                                             ScheduleTick(), PythonClient())}
