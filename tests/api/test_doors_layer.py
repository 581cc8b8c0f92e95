"""Every entry point changes state through a door (``api.doors``): no adapter module (the HTTP routes, ``/run``'s
helpers, A2A, the CLI) calls a state-changing method of the AgentqClient or its schedules itself. Otherwise that
entry point skips the guards (scope, roles, approval rules, rate limits, the audit's real principal) that the
door applies, as A2A did before the doors."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ADAPTERS = ("api/routes/*.py", "api/a2a/*.py", "api/run_start.py", "api/streams/fast_lane.py", "agentq/*.py")
"""The modules that translate a wire format (HTTP, A2A, the terminal) and must call the doors."""

STATE_CHANGING = frozenset({"enqueue", "respond", "approve", "reject", "cancel", "cancel_session", "delete_session",
                            "rewind", "add_approval", "redeliver"})
"""AgentqClient (and dead-letter) methods that change state. ``cancel`` with no argument is an asyncio task's or
the A2A SDK updater's, not the store's, and is left alone."""

SCHEDULE_WRITES = frozenset({"create", "update", "delete", "pause", "resume", "trigger", "save"})
"""Methods of ``client.schedules`` that change a schedule or enqueue a run."""

DOORS = "doors"


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def _is_schedules(node: ast.expr | None) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "schedules") or (
        isinstance(node, ast.Name) and node.id == "schedules")


def offences(source: str) -> list[str]:
    """Each call in ``source`` that changes state past the doors, as ``line N: .method(...)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        receiver, method = _receiver(node), node.func.attr
        if isinstance(receiver, ast.Name) and receiver.id == DOORS:
            continue
        has_arguments = bool(node.args or node.keywords)
        if (method in STATE_CHANGING and has_arguments) or (method in SCHEDULE_WRITES and _is_schedules(receiver)):
            found.append(f"line {node.lineno}: .{method}(...)")
    return sorted(found, key=lambda line: int(line.split(":")[0].removeprefix("line ")))


def test_no_adapter_changes_state_without_going_through_a_door():
    paths = sorted({path for pattern in ADAPTERS for path in ROOT.glob(pattern)})
    assert len(paths) > 20  # the globs still find the adapters
    found = {str(path.relative_to(ROOT)): offences(path.read_text()) for path in paths}
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_the_check_sees_each_way_past_a_door():
    source = (
        "async def f(client, services, queue, caller, guards):\n"
        "    await queue_of(services).enqueue('app', 'u', 's', 'hi')\n"
        "    await client.respond('e-1', [])\n"
        "    await client.cancel('e-1', 'why', actor=None)\n"
        "    await services.queue.delete_session('app', 'u', 's')\n"
        "    await client.schedules.trigger('app', 'u', 'daily')\n"
        "    schedules = client.schedules\n"
        "    await schedules.delete('app', 'u', 'daily')\n"
        "    await client.add_approval('e-1', 'c', 'p')\n"
        "    await doors.cancel(caller, guards, client, 'e-1', 'why')\n"
        "    await doors.trigger_schedule(caller, guards, client, 'app', 'u', 'daily')\n"
        "    await schedules.get('app', 'u', 'daily')\n"
        "    task.cancel()\n"
        "    await event_queue.enqueue_event(event)\n"
    )
    assert offences(source) == [
        "line 2: .enqueue(...)",
        "line 3: .respond(...)",
        "line 4: .cancel(...)",
        "line 5: .delete_session(...)",
        "line 6: .trigger(...)",
        "line 8: .delete(...)",
        "line 9: .add_approval(...)",
    ]
