"""The terminal's readable view (the default; ``--json`` prints the wire form instead, one JSON line each).

One line per event (``api.streams.sse_client.describe``, the demo's renderer: who, what, tool calls with their
arguments), prefixed with its local ISO time; a wait is shown with its question and a command to answer it
that pastes as printed; lists are tables. Rendered with ``rich``; colour only on a terminal.
"""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from api.streams.sse_client import SseFrame, describe

_console: Console | None = None


def console() -> Console:
    """stdout's console: the terminal's width on a terminal; wide enough that a pipe gets whole lines."""
    global _console
    if _console is None or _console.file is not sys.stdout:  # tests swap sys.stdout
        tty = sys.stdout.isatty()
        _console = Console(file=sys.stdout, highlight=False, soft_wrap=not tty, width=None if tty else 200)
    return _console


def local_time(epoch: float | None) -> str:
    """``epoch`` (Unix seconds) as a local ISO time to the second; '-' for None."""
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def entry_time(entry_id: str | None) -> str:
    """The local time of a stream entry id (``<ms>-<seq>``)."""
    try:
        return local_time(int(str(entry_id).split("-")[0]) / 1000)
    except ValueError:
        return "-"


def out(text: str, style: str | None = None) -> None:
    """Print one line (``text`` is plain text, never markup)."""
    console().print(escape(text), style=style)
    sys.stdout.flush()


def event_line(entry_id: str, kind: str, data: Any) -> str:
    """One readable line for a stream entry: its time, then who said or did what."""
    frame = SseFrame(id=entry_id, event="status" if kind == "status" else "message", data=data)
    return f"{entry_time(entry_id)}  {describe(frame)}"


def answer_command(record: Any, call: Any) -> str:
    """A command that answers ``call`` of ``record``, ready to paste (the JSON quoted for a POSIX shell)."""
    if call.kind == "confirmation":
        return f"agentq approve {record.id} {call.id}    # or: agentq reject {record.id} {call.id}"
    answer = example_answer(call.args.get("response_schema")) if call.kind == "input" else None
    if answer is None and call.answer and isinstance(call.answer.get("quickAnswers"), list) \
            and call.answer["quickAnswers"]:
        first = call.answer["quickAnswers"][0]
        answer = first.get("response") if isinstance(first, dict) else None
    if answer is None and call.answer and call.answer.get("schema"):
        answer = example_answer(call.answer["schema"])
    if answer is None:
        answer = {"status": "approved"}
    return f"agentq respond {record.id} {call.id} {shlex.quote(json.dumps(answer))}"


def example_answer(schema: Any) -> Any:
    """A value of ``schema``'s shape (its required fields, an enum's first value), to show how to answer."""
    if not isinstance(schema, dict):
        return "..."
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        wanted = schema.get("required") or list(properties)
        return {name: example_answer(properties.get(name)) for name in wanted}
    return {"boolean": True, "integer": 0, "number": 0, "array": [], "null": None}.get(kind, "...")


def what_it_asks(call: Any) -> str:
    """The question a pending call puts to a person, in words."""
    args = call.args or {}
    if call.kind == "confirmation":
        held = args.get("originalFunctionCall") or {}
        hint = (args.get("toolConfirmation") or {}).get("hint")
        asked = f"confirm {held.get('name')}({json.dumps(held.get('args', {}))})"
        return f"{asked}: {hint}" if hint else asked
    if call.kind == "input":
        return f"asks: {args.get('message') or args.get('question') or json.dumps(args)}"
    return f"{call.name}({json.dumps(args)})"


def waits(record: Any) -> None:
    """Print what a parked invocation waits for, each with the command that answers it."""
    for call in record.pending_calls:
        out(f"   waits for {call.id}: {what_it_asks(call)}", style="yellow")
        out(f"   answer: {answer_command(record, call)}", style="bold")


def message_text(record: Any) -> str:
    """The text of the message that started ``record``."""
    parts = (record.new_message.parts or []) if record.new_message else []
    return " ".join(part.text for part in parts if part.text)


def record_view(record: Any) -> None:
    """``agentq get``: the record's fields, one a line, then its waits."""
    rows = [("invocation", record.id), ("app", record.app_name), ("user", record.user_id),
            ("session", record.session_id), ("status", record.status), ("message", message_text(record)),
            ("created", local_time(record.created_at)), ("updated", local_time(record.updated_at)),
            ("finished", local_time(record.finished_at) if record.finished_at else None),
            ("attempts", str(record.attempts)), ("worker", record.worker),
            ("enqueued by", record.enqueued_by), ("schedule", record.schedule_id),
            ("error", f"{record.error.type}: {record.error.message}" if record.error else None),
            ("cancel reason", record.cancel_reason)]
    rows += [("audit", f"{local_time(entry.at)} {json.dumps(entry.to_json_dict())}") for entry in record.audit]
    fields([(name, value) for name, value in rows if value])
    waits(record)


def fields(rows: list[tuple[str, str]]) -> None:
    """Name / value lines, the names aligned (no table padding after the values: lines paste and grep clean)."""
    width = max((len(name) for name, _ in rows), default=0) + 2
    for name, value in rows:
        console().print(f"[bold]{escape(name.ljust(width))}[/bold]{escape(value)}")


def invocations_table(records: list, *, title: str | None = None) -> None:
    """A list of invocations: one row each (id, app, user, status, when, message or error)."""
    table = Table(title=title, title_justify="left", box=None, header_style="bold")
    for column in ("invocation", "app", "user", "status", "updated", "message / error"):
        table.add_column(column)
    for record in records:
        said = f"{record.error.type}: {record.error.message}" if record.error else message_text(record)
        table.add_row(record.id, record.app_name, record.user_id, record.status, local_time(record.updated_at),
                      escape(said))
    console().print(table)


def inbox_item(record: Any) -> None:
    """One parked invocation of the inbox: who asked what, since when, and how to answer each wait."""
    out(f"{local_time(record.updated_at)}  {record.id}  {record.app_name}/{record.user_id}: "
        f"{message_text(record)!r}")
    waits(record)


def schedules_table(schedules: list) -> None:
    """``agentq schedules list``: one row per schedule."""
    table = Table(box=None, header_style="bold")
    for column in ("schedule", "app", "user", "when", "state", "next run", "runs", "last invocation"):
        table.add_column(column)
    for schedule in schedules:
        spec = schedule.get("spec", {})
        when = spec.get("cron") or (f"every {spec['intervalS']}s" if spec.get("intervalS") else
                                    spec.get("at") or "-")
        state = "paused" if schedule.get("paused") else "ended" if schedule.get("ended") else "active"
        table.add_row(schedule["id"], schedule.get("appName", ""), schedule.get("userId", ""), escape(str(when)),
                      state, local_time(schedule.get("nextRunAt")), str(schedule.get("runs", 0)),
                      schedule.get("lastInvocationId") or "-")
    console().print(table)


def key_values(value: dict) -> None:
    """A JSON object's fields, one a line; times (``...At`` keys) in local ISO form."""
    rows = []
    for key, item in value.items():
        if key.endswith("At") and isinstance(item, int | float):
            item = local_time(item)
        rows.append((key, item if isinstance(item, str) else json.dumps(item)))
    fields(rows)
