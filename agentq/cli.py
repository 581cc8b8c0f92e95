"""``agentq``: one entry point for workers, the API, the demo, invocation commands, the inbox, status and stop.

Every error is one line on stderr naming the problem and what to do (``agentq.cli_errors``): exit code 2 for a
usage error, 1 for a refusal or failure; ``agentq --debug ...`` shows tracebacks instead.
"""

from __future__ import annotations

import argparse
import logging
import sys

from . import (
    commands,
    inbox_command,
    keys_command,
    list_command,
    migrate_command,
    rewind_command,
    schedules_command,
    status_command,
)
from .cli_errors import INTERRUPTED, USAGE, OneLineParser, describe

_INVOCATION_COMMANDS = {
    "enqueue": (commands.add_enqueue, "enqueue a message as a new invocation (prints its id)"),
    "follow": (commands.add_follow, "print an invocation's events until it settles"),
    "respond": (commands.add_respond, "answer a parked long-running call"),
    "approve": (commands.add_confirm, "approve a pending tool confirmation (the tool then runs once)"),
    "reject": (commands.add_confirm, "reject a pending tool confirmation (the tool never runs)"),
    "cancel": (commands.add_cancel, "cancel an invocation"),
    "get": (commands.add_get, "print an invocation's record"),
    "inbox": (inbox_command.add_arguments, "list the invocations waiting on a person (--follow: and new ones)"),
    "list": (list_command.add_arguments, "list invocations across apps and users (--status failed: what failed)"),
    "rewind": (rewind_command.add_arguments, "put a session back as it was before an invocation"),
}

EXAMPLES = """\
examples (single quotes: in double quotes the shell turns "$1200" into "200"):
  agentq worker --app examples.reimbursement:app &
  agentq enqueue reimbursement ann 'Reimburse $1200 for a conference' --follow
  agentq inbox
  agentq respond e-... <call id> '{"status": "approved"}' --follow
  agentq status
  agentq list --status failed
  agentq get e-... --json   # --json: the wire form, one JSON line each, for scripts
  agentq stop          # ends the api, workers and your embedded redis-server
"""


def build_parser() -> argparse.ArgumentParser:
    """The full ``agentq`` parser; ``api`` and ``demo`` flags come from their own modules, imported lazily."""
    parser = OneLineParser(prog="agentq", description="Durable ADK-style agents on Celery workers.",
                           epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Own dests: `agentq api` and `agentq demo` define the same flags, and a subcommand's defaults would
    # overwrite values given before the subcommand name.
    parser.add_argument("--redis-url", dest="top_redis_url", metavar="URL",
                        help="Redis URL (AGENTQ_REDIS_URL); none: an embedded redis-server")
    parser.add_argument("--data-dir", dest="top_data_dir", metavar="DIR",
                        help="embedded Redis data directory parent (AGENTQ_DATA_DIR; default "
                             "$XDG_DATA_HOME/agentq or ~/.local/share/agentq: one server per user)")
    parser.add_argument("--log-level", dest="top_log_level", metavar="LEVEL", help="(AGENTQ_LOG_LEVEL, INFO)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from . import run_worker

    run_worker.add_arguments(sub.add_parser("worker", help="run a worker process"))
    for name, (add, help_text) in _INVOCATION_COMMANDS.items():
        add(sub.add_parser(name, help=help_text, description=help_text))
    status_command.add_arguments(sub.add_parser(
        "status", help="workers alive, run jobs waiting, invocations by status"))
    schedules_command.add_scheduler_arguments(sub.add_parser(
        "scheduler", help="run the clock that enqueues schedules' runs (run one or several)"))
    schedules_command.add_schedules_arguments(sub.add_parser(
        "schedules", help="manage schedules: create, list, get, update, pause, resume, trigger, delete, runs"))
    sub.add_parser("stop", help="stop the api, workers and embedded redis-server of your data directory")
    migrate_command.add_arguments(sub.add_parser(
        "migrate", help="bring the store's data layout to this release's (online, resumable; prints what it did)"))
    keys_command.add_arguments(sub.add_parser("keys", help="make API keys (keys create NAME: printed once)"))
    for name, help_text in (("api", "serve the HTTP API"), ("demo", "run the human-approval demo end to end")):
        module = _lazy(name)
        command = sub.add_parser(name, help=help_text, add_help=module is not None)
        if module is not None:
            module.add_arguments(command)
    return parser


def _lazy(name: str):
    try:
        if name == "api":
            from . import serve_api as module
        else:
            from . import demo as module
    except ImportError:
        return None
    return module


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the command; the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:  # Ctrl-C ends `inbox --follow`, `follow` and the servers: no traceback
        return INTERRUPTED
    except Exception as exc:
        if args.debug:
            raise
        line, code = describe(exc, args.command, args, getattr(args, "resolved_redis_url", None))
        print(f"agentq {args.command}: {line}", file=sys.stderr)
        return code


def _run(args: argparse.Namespace) -> int:
    from runtime.errors import UsageError

    from .settings import Settings

    try:
        settings = Settings.from_env()
    except UsageError as exc:  # refused at start, naming the setting
        print(f"agentq {args.command}: {exc}", file=sys.stderr)
        return USAGE
    args.retention = settings.retention
    settings.redis_url = args.top_redis_url or settings.redis_url
    settings.data_dir = args.top_data_dir or settings.data_dir
    settings.log_level = (args.top_log_level or settings.log_level).upper()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "keys":
        return keys_command.run(args)
    if args.command == "worker":
        from . import run_worker

        return run_worker.run(args, settings)
    if args.command in ("api", "demo"):
        module = _lazy(args.command)
        if module is None:
            print(f"agentq {args.command} is not available in this installation", file=sys.stderr)
            return USAGE
        if args.top_redis_url:
            args.redis_url = args.top_redis_url
        if args.top_data_dir:
            args.data_dir = args.top_data_dir
        return module.run(args)
    if args.command == "stop":
        from . import stop_command

        if settings.redis_url:  # an external Redis is not ours to stop
            print(f"agentq stop: leaves the Redis at {settings.redis_url} alone; it stops only what runs on the "
                  "embedded redis-server of your data directory", file=sys.stderr)
        return stop_command.run(settings.data_dir)
    if args.command == "status":
        return _status(args, settings)
    from .embedded import ensure_redis

    if args.command == "migrate":
        local = ensure_redis(settings.redis_url, settings.data_dir)
        try:
            return migrate_command.run(args, local.url)
        finally:
            local.release()
    from worker.records.migrate import require_layout

    if args.command == "scheduler":
        local = ensure_redis(settings.redis_url, settings.data_dir, register="scheduler")
        try:
            require_layout(local.url, who="agentq scheduler", retention_s=settings.retention.settled_s)
            return schedules_command.run_scheduler(args, local.url)
        finally:
            local.release()
    local = ensure_redis(settings.redis_url, settings.data_dir)
    args.resolved_redis_url = local.url
    args.redis_where = describe_redis(local)
    try:
        # the store's layout: refused if newer than this code, migrated first if older
        require_layout(local.url, who=f"agentq {args.command}", retention_s=settings.retention.settled_s)
        if args.command == "inbox":
            return inbox_command.run(args, local.url)
        if args.command == "list":
            return list_command.run(args, local.url)
        if args.command == "rewind":
            return rewind_command.run(args, local.url)
        if args.command == "schedules":
            return schedules_command.run_schedules(args, local.url)
        return commands.run(args.command, args, local.url)
    finally:
        local.release()


def describe_redis(local) -> str:
    """Which Redis a command talks to, for messages: its URL and where it comes from."""
    from worker.config.local_redis import redis_dir

    if local.data is None:
        return f"{local.url} (AGENTQ_REDIS_URL)"
    return f"{local.url} (the embedded redis-server in {redis_dir(local.data)})"


def _status(args: argparse.Namespace, settings) -> int:
    """``agentq status`` looks without starting anything: no Redis running is an answer too."""
    from worker.config.local_redis import redis_dir, running_url

    from .embedded import live_users

    if settings.redis_url:
        args.resolved_redis_url = settings.redis_url
        return status_command.run(args, settings.redis_url, None)
    url = running_url(settings.data_dir)
    if url is None and args.json:
        print('{"redis": null}')
        return 0
    if url is None:
        print(f"redis        not running (no AGENTQ_REDIS_URL, no embedded redis-server in "
              f"{redis_dir(settings.data_dir)}); `agentq worker` or `agentq api` starts one")
        return 0
    args.resolved_redis_url = url
    return status_command.run(args, url, live_users(settings.data_dir))


if __name__ == "__main__":
    raise SystemExit(main())
