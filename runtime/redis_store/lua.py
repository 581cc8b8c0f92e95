"""Run a Lua script by EVALSHA, loading it on first use (and again after a server restart forgets it)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError


class LuaScript:
    """A script known by its SHA1: one EVALSHA round trip per call once the server has it cached."""

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self.loads = 0
        """How many times the script was (re)loaded after the server did not know it: a call that had to load
        it ran after the commands sent behind it (see worker.lease.acquire)."""

    async def __call__(self, client, keys: Sequence[str], args: Sequence, *, retry: bool = False) -> object:
        """Run the script; with ``retry`` (for scripts safe to run twice), once more after a dropped connection."""
        try:
            return await self._run(client, keys, args)
        except RedisConnectionError:
            if not retry:
                raise
            return await self._run(client, keys, args)

    async def _run(self, client, keys: Sequence[str], args: Sequence) -> object:
        try:
            return await client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            # The script cache is empty after a restart or SCRIPT FLUSH; loading is a one-off extra trip.
            self.loads += 1
            await client.script_load(self.source)
            return await client.evalsha(self.sha, len(keys), *keys, *args)
