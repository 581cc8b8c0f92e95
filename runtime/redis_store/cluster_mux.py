"""ClusterMux: agentq's pipelined connection on a Redis Cluster, one ``MuxConnection`` per master.

On one Redis every non-blocking command of a loop shares one pipelined connection (``mux.py``). On a Cluster the
same holds per master: a command goes to the master of its first key's hash slot, found in a slot map read with
``CLUSTER SLOTS`` (Redis 6.2 and later; the embedded server is 6.2, without ``CLUSTER SHARDS``). agentq's keys
of one user or session share a hash tag, so a script's keys are always in one slot, and commands queued for one
user keep their order: they go to one node's connection.

When the map is out of date:

- ``MOVED <slot> <host:port>``: the command did not run. The slot is pointed at the named node, the command is
  sent there, and the whole map is read again in the background (a reshard moves many slots).
- ``ASK <slot> <host:port>``: the slot is being migrated and this key is already on the target. ``ASKING`` and
  the command go to the target together, in one write; the map stays as it is.
- ``TRYAGAIN``: a multi-key command (a script) whose keys are split by a migration in progress. It did not run;
  it is sent again after a short pause, a few times, then the error is raised (the store counts it as away).
- ``NOSCRIPT`` is raised as on one node (``NoScriptError``): the caller (``LuaScript``) loads the script, on every
  master, and runs it again. Nothing here re-sends a script by itself.
- A lost connection fails the commands in flight on it (a script whose reply was lost may have run, so it is not
  sent again, as ``connection.cluster_options`` says for redis-py) and makes the map be read again, so a
  replica promoted in a failover is found. A node that cannot be connected to at all was never sent the command:
  that one waits for the new map and is sent to the slot's master in it.

Blocking reads and pub/sub stay on redis-py's ``RedisCluster`` (``LoopClients.get``), as on one Redis.
"""

from __future__ import annotations

import asyncio
import functools
import logging

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from .mux import ConnectFailedError, MuxConnection, Pipelined
from .redis_url import parse_cluster_url

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
"""MOVED, ASK and TRYAGAIN answers one command follows before its last error is raised."""
TRYAGAIN_PAUSE_S = 0.05
"""How long a command split by a slot migration waits before it is sent again."""
REFRESH_CONNECT_TIMEOUT_S = 5.0
"""How long reading the slot map waits for one node before asking the next."""

_SCRIPT_COMMANDS = frozenset({"EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL", "FCALL_RO"})
_KEYLESS_COMMANDS = frozenset({"PING", "INFO", "TIME", "CLUSTER", "SCRIPT", "CONFIG", "DBSIZE", "ECHO", "WAIT",
                               "ASKING", "READONLY", "COMMAND", "CLIENT", "MEMORY", "SLOWLOG", "LASTSAVE"})
_REDIRECTS = ("MOVED ", "ASK ", "TRYAGAIN")
_MAP_CHANGING = ("CLUSTERDOWN", "READONLY", "MASTERDOWN")
"""Errors of a Cluster whose masters are changing (a failover): raised, and the map read again."""


def key_of(args: tuple) -> str | bytes | None:
    """The key whose slot a command is routed by: a script's first KEYS entry, else the first argument; None for a
    command without keys (any master can take it)."""
    name = args[0]
    if name == "EVALSHA" or (isinstance(name, str) and name.upper() in _SCRIPT_COMMANDS):
        return args[3] if int(args[2]) > 0 else None
    if len(args) < 2 or (isinstance(name, str) and name.upper() in _KEYLESS_COMMANDS):
        return None
    return args[1]


def slot_of(key: str | bytes) -> int:
    """The hash slot of ``key`` (its ``{tag}`` only, when it has one)."""
    return key_slot(key.encode() if isinstance(key, str) else key)


def _redirect(error: ResponseError) -> tuple[str, int, tuple[str, int]]:
    """``MOVED 3999 127.0.0.1:6381`` as ("MOVED", 3999, ("127.0.0.1", 6381))."""
    kind, slot, address = str(error).split(" ", 2)
    host, _, port = address.rpartition(":")
    return kind, int(slot), (host, int(port))


def _is_redirect(error: BaseException) -> bool:
    return isinstance(error, ResponseError) and str(error).startswith(_REDIRECTS)


class ClusterMux(Pipelined):
    """The mux for a ``redis+cluster://`` URL: a pipelined connection per master, commands routed by hash slot.

    Has the mux's surface (``execute_command``, ``send_now``, ``send_together``, ``evalsha``, ``script_load``,
    ``aclose``), so the store and the scripts use it as they use a ``MuxConnection``."""

    def __init__(self, url: str):
        parsed = parse_cluster_url(url)
        self._seeds = list(parsed.nodes)
        self._username = parsed.username or None
        self._password = parsed.password or None
        self._nodes: dict[tuple[str, int], MuxConnection] = {}
        self._slots: list[MuxConnection | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
        self._masters: list[MuxConnection] = []
        self._refreshing: asyncio.Task | None = None
        self.refreshes = 0
        """How many times the slot map was read (for tests and benchmarks)."""

    # --- the slot map ---

    def _node(self, address: tuple[str, int]) -> MuxConnection:
        if not address[0]:  # "MOVED 3999 :6381": the host of the node that answered, one of the URL's here
            address = (self._seeds[0][0], address[1])
        node = self._nodes.get(address)
        if node is None:
            node = self._nodes[address] = MuxConnection.to_node(
                address[0], address[1], username=self._username, password=self._password)
        return node

    def _refresh_soon(self) -> asyncio.Task:
        """Read the map again in the background (one reading at a time; later callers share it)."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._refresh())
            self._refreshing.add_done_callback(_consume_failure)
        return self._refreshing

    async def refresh(self) -> None:
        """Read the slot map now (or wait for the reading under way). Raises ConnectionError when no node answers."""
        await asyncio.shield(self._refresh_soon())

    async def _refresh(self) -> None:
        known = [address for address, node in self._nodes.items() if node in self._masters]
        candidates = list(dict.fromkeys([*known, *self._seeds, *self._nodes]))
        failures = []
        for address in candidates:
            try:
                reply = await asyncio.wait_for(self._node(address).execute_command("CLUSTER", "SLOTS"),
                                               REFRESH_CONNECT_TIMEOUT_S)
            except (TimeoutError, RedisConnectionError, ResponseError, OSError) as exc:
                failures.append(f"{address[0]}:{address[1]}: {exc!r}")
                continue
            self._apply(reply, address)
            return
        raise RedisConnectionError(f"no node of the Redis Cluster answered CLUSTER SLOTS ({'; '.join(failures)})")

    def _apply(self, reply: list, asked: tuple[str, int]) -> None:
        slots: list[MuxConnection | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
        masters: dict[int, MuxConnection] = {}
        for entry in reply:
            start, end, master = int(entry[0]), int(entry[1]), entry[2]
            host = master[0] or asked[0]  # an empty host means "the node you asked"
            node = self._node((host, int(master[1])))
            masters[id(node)] = node
            slots[start:end + 1] = [node] * (end - start + 1)
        self._slots = slots
        self._masters = list(masters.values())
        self.refreshes += 1

    async def _routed(self, args: tuple) -> MuxConnection:
        """The node for ``args`` once a map is known (the first command of a process reads it)."""
        if not self._masters:
            await self.refresh()
        node = self._route(args)
        if node is None:
            raise RedisConnectionError(f"no master serves the slot of {key_of(args)!r} (the Cluster is not whole)")
        return node

    def _route(self, args: tuple) -> MuxConnection | None:
        key = key_of(args)
        if key is None:
            return self._masters[0] if self._masters else None
        return self._slots[slot_of(key)]

    # --- commands ---

    async def execute_command(self, *args):
        """Send one command to its slot's master and await its reply, following MOVED, ASK and TRYAGAIN."""
        node = self._route(args)
        if node is None:
            node = await self._routed(args)
        try:
            return await node.execute_command(*args)
        except ResponseError as exc:
            if not _is_redirect(exc):
                if str(exc).startswith(_MAP_CHANGING):
                    self._refresh_soon()
                raise
            return await self._follow(args, exc)
        except ConnectFailedError:
            return await self._after_failed_connect(node, args)
        except RedisConnectionError:
            self._refresh_soon()
            raise

    def send_now(self, *args) -> asyncio.Future | None:
        """Queue a command on its node's connection without awaiting it (before every command queued after it for
        the same slot); None before the map is read or the node is connected (then await ``execute_command``)."""
        node = self._route(args)
        if node is None:
            return None
        sent = node.send_now(*args)
        if sent is None:
            return None
        reply = sent.get_loop().create_future()
        sent.add_done_callback(functools.partial(self._settle, reply, args))
        return reply

    def _settle(self, reply: asyncio.Future, args: tuple, sent: asyncio.Future) -> None:
        if reply.done():
            return
        if sent.cancelled():
            reply.cancel()
            return
        error = sent.exception()
        if error is None:
            reply.set_result(sent.result())
        elif _is_redirect(error):
            followed = asyncio.ensure_future(self._follow(args, error))
            followed.add_done_callback(functools.partial(_copy_outcome, reply))
        else:
            if isinstance(error, RedisConnectionError):
                self._refresh_soon()
            reply.set_exception(error)

    async def _follow(self, args: tuple, error: ResponseError):
        """Send ``args`` where a MOVED or ASK answer says, or again after TRYAGAIN; the last error if it keeps
        being redirected."""
        for _ in range(MAX_REDIRECTS):
            message = str(error)
            if message.startswith("TRYAGAIN"):
                await asyncio.sleep(TRYAGAIN_PAUSE_S)
                node = await self._routed(args)
                sending = node.execute_command(*args)
            else:
                kind, slot, address = _redirect(error)
                node = self._node(address)
                if kind == "MOVED":
                    self._slots[slot] = node  # at once, for the commands that follow; the rest of a reshard later
                    self._refresh_soon()
                    sending = node.execute_command(*args)
                else:
                    sending = self._asking(node, args)
            try:
                return await sending
            except ResponseError as again:
                if not _is_redirect(again):
                    raise
                error = again
            except RedisConnectionError:
                self._refresh_soon()
                raise
        raise error

    @staticmethod
    async def _asking(node: MuxConnection, args: tuple):
        _, reply = await node.send_together([("ASKING",), args])
        if isinstance(reply, BaseException):
            raise reply
        return reply

    async def _after_failed_connect(self, node: MuxConnection, args: tuple):
        """The command never left: read the map again and send it to the slot's master in it, if that changed."""
        try:
            await self.refresh()
        except RedisConnectionError:
            pass
        now = self._route(args)
        if now is None or now is node:
            raise ConnectFailedError(f"cannot connect to the master of the slot of {key_of(args)!r}, and the "
                                     "Cluster names no other yet")
        try:  # once: a second failure is raised as the store being away
            return await now.execute_command(*args)
        except ResponseError as exc:
            if not _is_redirect(exc):
                raise
            return await self._follow(args, exc)
        except RedisConnectionError:
            self._refresh_soon()
            raise

    async def send_together(self, key: str, commands: list[tuple]) -> list:
        """Send ``commands`` back to back on one connection of the master of ``key``'s slot (following a MOVED or
        ASK answer to the first of them); each reply, or the error it was. For a write and the ``WAIT`` after it
        (``replication``)."""
        node = self._route(("GET", key)) or await self._routed(("GET", key))
        asking = False
        for _ in range(MAX_REDIRECTS):
            replies = await node.send_together([("ASKING",), *commands] if asking else commands)
            if asking:
                replies = replies[1:]
            first = replies[0]
            if not _is_redirect(first) or str(first).startswith("TRYAGAIN"):
                return replies
            kind, slot, address = _redirect(first)
            node, asking = self._node(address), kind == "ASK"
            if not asking:
                self._slots[slot] = node
                self._refresh_soon()
        return replies

    def evalsha(self, sha: str, numkeys: int, *keys_and_args):
        """EVALSHA on the master of the first key's slot; raises NoScriptError when that master lacks the script."""
        return self.execute_command("EVALSHA", sha, numkeys, *keys_and_args)

    async def script_load(self, source: str) -> str:
        """SCRIPT LOAD on every master (a script may run on any of them); the SHA1. Raises the first failure."""
        if not self._masters:
            await self.refresh()
        replies = await asyncio.gather(*(node.execute_command("SCRIPT", "LOAD", source) for node in self._masters),
                                       return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException):
                if isinstance(reply, RedisConnectionError):
                    self._refresh_soon()
                raise reply
        return replies[0]

    async def aclose(self) -> None:
        """Close every node's connection; commands still in flight fail with ConnectionError."""
        if self._refreshing is not None and not self._refreshing.done():
            self._refreshing.cancel()
        for node in self._nodes.values():
            await node.aclose()
        self._nodes.clear()
        self._masters = []
        self._slots = [None] * REDIS_CLUSTER_HASH_SLOTS


def _copy_outcome(reply: asyncio.Future, done: asyncio.Future) -> None:
    if reply.done():
        if not done.cancelled():
            done.exception()  # retrieved: the caller gave up on it
        return
    if done.cancelled():
        reply.cancel()
    elif done.exception() is not None:
        reply.set_exception(done.exception())
    else:
        reply.set_result(done.result())


def _consume_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("reading the Redis Cluster's slot map failed: %r", task.exception())
