"""Every Lua script agentq runs in Redis, one ``.lua`` file each, and the class that runs them.

Layout: ``sessions/`` (the session service and streams), ``invocations/`` (the invocation lifecycle: enqueue,
claim, settle, respond, cancel, the tool journal, session deletion), ``webhooks/`` (the webhook outbox),
``rate/`` (enqueue rate limits and in-flight quotas),
``listings/`` (paged reads), and ``lib/``: functions several scripts share (stream trimming, state pairs, the
status steps), prepended to a script that names them on its ``-- uses:`` line. Redis 6.2 (the embedded
server) has no Redis Functions, so a library is text put in front of each script that uses it, once, when the
script is loaded; its code lives in one file.

Each script opens with a header the loader reads (see ``script.LuaScript``)::

    -- What the script does.
    -- uses: invocation_status, stream_trim
    -- KEYS: record, queue, [app_state]
    -- ARGV: invocation_id, now, fields...

and is called with those names as keyword arguments. ``runtime.redis_store.scripts`` loads them all.
"""

from .script import LuaScript

__all__ = ["LuaScript"]
