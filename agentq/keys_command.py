"""``agentq keys create NAME``: a new API key, printed once, and the keys-file entry that holds only its hash.

    agentq keys create approver-1 --roles read,answer --users '*'

The secret is 32 random bytes (URL-safe base64); only its SHA-256 goes into the keys file, so nothing at
rest lets anyone call the API. Lost keys are replaced, never recovered.
"""

from __future__ import annotations

import argparse
import json
import secrets

PREFIX = "aq_"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``keys create NAME [--roles ...] [--users ...] [--apps ...]``."""
    actions = parser.add_subparsers(dest="keys_action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="make a new key: prints it once, and the line for the keys file")
    create.add_argument("name", help="the key's name: its principal id in approval rules and audit records")
    create.add_argument("--roles", default="enqueue,read,answer,operate",
                        help="comma-separated: enqueue, read, answer, operate (default: all)")
    create.add_argument("--users", default="*", help="comma-separated user ids it may touch ('*': any)")
    create.add_argument("--apps", default="*", help="comma-separated app names it may touch ('*': any)")


def create(name: str, roles: str, users: str, apps: str) -> tuple[str, dict]:
    """A new secret and its keys-file entry ``{name: {sha256, users, apps, roles}}`` (validated as the API would)."""
    from api.access.auth import hash_secret, parse_keys

    secret = PREFIX + secrets.token_urlsafe(32)
    entry = {name: {"sha256": hash_secret(secret), "users": _split(users), "apps": _split(apps),
                    "roles": _split(roles)}}
    parse_keys(entry)  # UsageError naming a bad role or an empty list, before anything is printed
    return secret, entry


def run(args: argparse.Namespace) -> int:
    """Print the key, then the entry to merge into the keys file (AGENTQ_API_KEYS_FILE)."""
    secret, entry = create(args.name, args.roles, args.users, args.apps)
    print(f"key (shown once, keep it secret): {secret}")
    print("add to the keys file (AGENTQ_API_KEYS_FILE), which holds only its hash:")
    print(json.dumps(entry))
    return 0


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]
