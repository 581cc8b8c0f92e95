"""``agentq``: one entry point for workers, the API, the demo and invocation commands (argparse)."""

from __future__ import annotations

import argparse
import logging
import sys

from . import commands

_INVOCATION_COMMANDS = {
    "enqueue": (commands.add_enqueue, "enqueue a message as a new invocation (prints its id)"),
    "follow": (commands.add_follow, "print an invocation's events until it settles"),
    "respond": (commands.add_respond, "answer a parked long-running call"),
    "approve": (commands.add_confirm, "approve a pending tool confirmation (the tool then runs once)"),
    "reject": (commands.add_confirm, "reject a pending tool confirmation (the tool never runs)"),
    "cancel": (commands.add_cancel, "cancel an invocation"),
    "get": (commands.add_get, "print an invocation's record"),
}


def build_parser() -> argparse.ArgumentParser:
    """The full ``agentq`` parser; ``api`` and ``demo`` flags come from their own modules, imported lazily."""
    parser = argparse.ArgumentParser(prog="agentq", description="Durable ADK-style agents on Celery workers.")
    # Own dests: `agentq api` and `agentq demo` define the same flags, and a subcommand's defaults would
    # overwrite values given before the subcommand name.
    parser.add_argument("--redis-url", dest="top_redis_url", metavar="URL",
                        help="Redis URL (AGENTQ_REDIS_URL); none: an embedded redis-server")
    parser.add_argument("--data-dir", dest="top_data_dir", metavar="DIR",
                        help="embedded Redis data directory parent (AGENTQ_DATA_DIR, .agentq)")
    parser.add_argument("--log-level", dest="top_log_level", metavar="LEVEL", help="(AGENTQ_LOG_LEVEL, INFO)")
    sub = parser.add_subparsers(dest="command", required=True)
    from . import run_worker

    run_worker.add_arguments(sub.add_parser("worker", help="run a worker process"))
    for name, (add, help_text) in _INVOCATION_COMMANDS.items():
        add(sub.add_parser(name, help=help_text))
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
    from runtime.errors import UsageError

    from .settings import Settings, ensure_redis

    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except UsageError as exc:  # refused at start, naming the setting
        print(f"agentq {args.command}: {exc}", file=sys.stderr)
        return 2
    args.retention = settings.retention
    settings.redis_url = args.top_redis_url or settings.redis_url
    settings.data_dir = args.top_data_dir or settings.data_dir
    settings.log_level = (args.top_log_level or settings.log_level).upper()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "worker":
        from . import run_worker

        return run_worker.run(args, settings)
    if args.command in ("api", "demo"):
        module = _lazy(args.command)
        if module is None:
            print(f"agentq {args.command} is not available in this installation", file=sys.stderr)
            return 2
        if args.top_redis_url:
            args.redis_url = args.top_redis_url
        if args.top_data_dir:
            args.data_dir = args.top_data_dir
        return module.run(args)
    redis_url, embedded = ensure_redis(settings.redis_url, settings.data_dir)
    from runtime.errors import AgentqError

    try:
        return commands.run(args.command, args, redis_url)
    except AgentqError as exc:  # a wrong id or a refused answer: say what is wrong, no traceback
        print(f"agentq {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    raise SystemExit(main())
