"""How the ``agentq`` command reports a failure: one line naming the problem and what to do, and an exit code.

Exit codes: 2 for a usage error (a malformed argument, a setting or message that makes no sense), 1 for a
refusal or a failure (an unknown id, a call that is not pending, Redis out of reach), 130 for Ctrl-C.
``agentq --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

USAGE = 2
FAILED = 1
INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (with where to read more) and exit 2."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        self.exit(USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def json_argument(example: str):
    """An argparse type: a JSON value, refused in one line that shows ``example`` in shell-safe quotes."""

    def parse(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(
                f"{text[:80]!r} is not JSON ({exc}); put it in single quotes, e.g. {example}") from None

    parse.__name__ = "JSON"  # argparse names the type in some messages
    return parse


def describe(exc: BaseException, command: str, args: argparse.Namespace, redis_url: str | None) -> tuple[str, int]:
    """The one line (without the ``agentq <command>:`` prefix) and exit code for ``exc``."""
    import redis

    from runtime import errors

    invocation_id = getattr(args, "invocation_id", None)
    redis_url = redis_url or "AGENTQ_REDIS_URL"
    if isinstance(exc, errors.UsageError):
        return str(exc), USAGE
    if isinstance(exc, errors.AppNotFoundError):  # a wrong --app is a usage error too
        return f"{exc} (run from the folder that holds the module, or add that folder to PYTHONPATH)", USAGE
    if isinstance(exc, errors.InvocationNotFoundError):
        return (f"{exc}, in the Redis at {redis_url} (the one your workers use? "
                "`agentq inbox` lists the parked invocations there)"), FAILED
    if isinstance(exc, errors.SessionNotFoundError):
        return f"{exc} (leave out --session to start a new one)", FAILED
    if isinstance(exc, errors.CallNotPendingError | errors.FunctionCallNotFoundError) and invocation_id:
        return f"{exc}; its pending calls: agentq get {invocation_id}", FAILED
    if isinstance(exc, errors.InvalidTransitionError) and invocation_id:
        return f"{exc}; its status: agentq get {invocation_id}", FAILED
    if isinstance(exc, errors.AgentqError):
        return str(exc), FAILED
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError | ConnectionError):
        return (f"cannot reach Redis at {redis_url} ({exc}); start it, or unset AGENTQ_REDIS_URL and --redis-url "
                "to use the embedded redis-server"), FAILED
    return (f"unexpected {type(exc).__name__}: {exc} (run `agentq --debug {command} ...` for the traceback)",
            FAILED)
