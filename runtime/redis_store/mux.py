"""MuxConnection: one pipelined Redis connection per event loop for the session service's scripts.

Every coroutine queues its command on the same socket and awaits a future; the commands queued during one
loop iteration go out in one write, and replies come back in order and are matched first-in first-out.
Concurrent commits from hundreds of invocations therefore share writes and reads instead of each taking a
pooled connection, and a command costs about a third of the client CPU redis-py's pool path costs (see
bench/store_bench.py). Only non-blocking commands belong here:
a blocking XREAD would hold up every reply behind it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Awaitable

import hiredis
from redis.asyncio.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.sentinel import MasterNotFoundError

from .redis_url import SENTINEL_SOCKET_TIMEOUT_S, is_sentinel, parse_store_url


def pack(args: tuple) -> bytes:
    """A command in RESP: an array of bulk strings."""
    try:
        # hiredis packs str, bytes, int and float in C, floats as repr() does; it refuses anything else (bool,
        # enums, ...), which the Python packer below takes as it always has
        return hiredis.pack_command(args)
    except TypeError:
        return _pack(args)


def _pack(args: tuple) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, int | float):
            arg = repr(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.reader = hiredis.Reader(encoding="utf-8", replyError=ResponseError)
        self.pending: deque[asyncio.Future] = deque()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._outgoing: list[bytes] = []
        self._flush_context = contextvars.Context()  # call_soon would copy the caller's context every time

    def connection_made(self, transport) -> None:
        self.transport = transport

    def send(self, command: bytes, future: asyncio.Future) -> None:
        """Queue ``command`` (its reply settles ``future``); written with the others queued this loop iteration.

        One write per iteration instead of one per command: hundreds of invocations committing at once share
        a syscall. A lone command still goes out on the next iteration, with no timer in between.

        On a connection already lost the command fails at once: it would never be written, and ``_fail`` has
        run already, so nothing else would ever settle its future. (Callers that waited for a reconnect resume
        a loop iteration or two after it completed; a ``CLIENT KILL`` or a failover can drop the new
        connection in between, and such a command used to hang its invocation for good.)"""
        if self.closed:
            future.set_exception(RedisConnectionError("connection to Redis lost before the command was sent"))
            return
        self.pending.append(future)
        if not self._outgoing:
            future.get_loop().call_soon(self._flush, context=self._flush_context)
        self._outgoing.append(command)

    def _flush(self) -> None:
        data = b"".join(self._outgoing)
        self._outgoing.clear()
        if not self.closed and not self.transport.is_closing():  # else their futures fail with the connection
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        try:
            self.reader.feed(data)
            while (reply := self.reader.gets()) is not False:
                future = self.pending.popleft()
                if future.done():  # its caller was cancelled; the reply still had to be consumed
                    continue
                if isinstance(reply, ResponseError):
                    error = NoScriptError(str(reply)) if str(reply).startswith("NOSCRIPT") else reply
                    future.set_exception(error)
                    if str(reply).startswith("READONLY"):  # a demoted master: reconnect to whoever is master now
                        self.transport.close()
                else:
                    future.set_result(reply)
        except hiredis.ProtocolError as exc:
            self.transport.close()
            self._fail(RedisConnectionError(f"protocol error from Redis: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"connection to Redis lost: {exc or 'closed by server'}"))

    def _fail(self, error: Exception) -> None:
        self.closed = True
        while self.pending:
            future = self.pending.popleft()
            if not future.done():
                future.set_exception(error)


class ConnectFailedError(RedisConnectionError):
    """No connection could be made, so the command was never sent: sending it again elsewhere is safe."""


class Pipelined:
    """A connection ``queue_command`` can queue on at once (``send_now``): one node's, or a Cluster's per node."""

    def send_now(self, *args) -> asyncio.Future | None:  # pragma: no cover - the subclasses say
        raise NotImplementedError


class MuxConnection(Pipelined):
    """Connects on first use and again after the connection drops; commands are never retried here."""

    @classmethod
    def to_node(cls, host: str, port: int, *, username: str | None = None,
                password: str | None = None) -> MuxConnection:
        """A connection to one Redis Cluster node (database 0), without a URL to quote the password into."""
        connection = cls.__new__(cls)
        connection._sentinel = None
        connection._params = {"host": host, "port": port, "username": username, "password": password}
        connection._protocol = None
        connection._connecting = None
        return connection

    def __init__(self, url: str):
        self._sentinel = None
        if is_sentinel(url):  # the master's address is asked of the sentinels on every (re)connect
            from redis.asyncio.sentinel import Sentinel

            parsed = parse_store_url(url)
            self._master = parsed.master
            self._sentinel = Sentinel(parsed.sentinels, sentinel_kwargs={"socket_timeout": SENTINEL_SOCKET_TIMEOUT_S})
            self._params = {"db": parsed.db, "username": parsed.username, "password": parsed.password}
        else:
            self._params = parse_url(url)
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Task | None = None

    @staticmethod
    def supports(url: str) -> bool:
        """True for redis://, unix:// and sentinel:// URLs (TLS stays with redis-py)."""
        return url.startswith(("redis://", "unix://", "sentinel://"))

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        if self._sentinel is not None:
            try:
                host, port = await self._sentinel.discover_master(self._master)
            except MasterNotFoundError as exc:
                raise OSError(f"no master {self._master!r} known to the sentinels: {exc}") from exc
            _, protocol = await loop.create_connection(_Protocol, host, port)
        elif "path" in self._params:
            _, protocol = await loop.create_unix_connection(_Protocol, self._params["path"])
        else:
            _, protocol = await loop.create_connection(
                _Protocol, self._params.get("host", "localhost"), self._params.get("port", 6379)
            )
        handshake = []
        if self._params.get("password"):
            user = self._params.get("username")
            handshake.append(("AUTH", user, self._params["password"]) if user else ("AUTH", self._params["password"]))
        if self._params.get("db"):
            handshake.append(("SELECT", self._params["db"]))
        for command in handshake:
            await self._send(protocol, command)
        return protocol

    async def _ready(self) -> _Protocol:
        protocol = self._protocol
        if protocol is not None and not protocol.closed and not protocol.transport.is_closing():
            return protocol
        if self._connecting is None:  # the first caller connects; the others wait for the same attempt
            self._connecting = asyncio.ensure_future(self._connect())
        connecting = self._connecting
        try:
            self._protocol = await asyncio.shield(connecting)
        except OSError as exc:
            raise ConnectFailedError(f"cannot connect to Redis: {exc}") from exc
        finally:
            if self._connecting is connecting and connecting.done():
                self._connecting = None
        return self._protocol

    @staticmethod
    def _send(protocol: _Protocol, args: tuple) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        protocol.send(pack(args), future)
        return future

    async def execute_command(self, *args):
        """Send one command and await its reply."""
        protocol = self._protocol
        if protocol is None or protocol.closed or protocol.transport.is_closing():
            protocol = await self._ready()
        return await self._send(protocol, args)

    def send_now(self, *args) -> asyncio.Future | None:
        """Queue a command without awaiting its reply: it reaches Redis before every command queued after it on
        this connection. None when there is no live connection (then await ``execute_command`` instead)."""
        protocol = self._protocol
        if protocol is None or protocol.closed or protocol.transport.is_closing():
            return None
        return self._send(protocol, args)

    async def send_together(self, commands: list[tuple]) -> list:
        """Send ``commands`` back to back in one write; each reply, or the error it was (so an ``ASKING`` and the
        command it lets in, or a write and the ``WAIT`` after it, share one connection and one trip)."""
        protocol = self._protocol
        if protocol is None or protocol.closed or protocol.transport.is_closing():
            protocol = await self._ready()
        futures = [self._send(protocol, args) for args in commands]
        return await asyncio.gather(*futures, return_exceptions=True)

    def evalsha(self, sha: str, numkeys: int, *keys_and_args):
        """EVALSHA (an awaitable); raises NoScriptError when the server does not have the script."""
        return self.execute_command("EVALSHA", sha, numkeys, *keys_and_args)

    async def script_load(self, source: str) -> str:
        """SCRIPT LOAD; returns the SHA1."""
        return await self.execute_command("SCRIPT", "LOAD", source)

    async def aclose(self) -> None:
        """Close the connection; commands still in flight fail with ConnectionError."""
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()
        self._protocol = None


def queue_command(client, *args) -> Awaitable:
    """The reply to ``args``, as an awaitable. On a connected MuxConnection the command is queued at once (a plain
    future; it reaches Redis before every command queued after it); on anything else, or before the connection
    is up, a coroutine that sends it when awaited. A Cluster's ``ClusterMux`` queues on its node's connection."""
    if isinstance(client, Pipelined):
        queued = client.send_now(*args)
        if queued is not None:
            return queued
    return client.execute_command(*args)
