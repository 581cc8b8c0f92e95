"""CountingProxy: a TCP proxy in front of a redis-server that counts the commands and round trips sent through it.

bench/workflow_bench.py points one worker process at it to count what that worker alone sends per invocation;
the benchmark's own client talks to Redis directly and is not counted. Why not the server's own counters: INFO
commandstats also counts the commands Lua scripts run inside an EVALSHA and cannot tell one client from another,
and Redis 6.2 (the embedded server) keeps no per-connection command count in CLIENT LIST; MONITOR would slow
every command down.

A round trip is a send that waits for an answer: bytes from the client that arrive after the server last
answered on that connection (a pipeline, or the mux's batched write, is one). An EVALSHA is counted under the
name of the agentq script with that SHA1 (``runtime.redis_store.scripts``).

``server_cpu_s`` reads what the server itself spent, for costs that are not one client's commands (an idle
page's share of the server's time, bench/ui_inbox_bench.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Counts:
    """Commands by name and round trips sent through the proxy so far."""

    commands: Counter = field(default_factory=Counter)
    round_trips: int = 0

    def __sub__(self, earlier: Counts) -> Counts:
        commands = Counter(self.commands)
        commands.subtract(earlier.commands)
        return Counts(+commands, self.round_trips - earlier.round_trips)


async def server_cpu_s(redis) -> float:
    """The redis-server's own CPU time so far (user + system seconds, INFO cpu): what every client costs it."""
    cpu = await redis.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


class CommandParser:
    """Splits a client's RESP byte stream into commands, fed in whatever chunks the socket gives."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[list[bytes]]:
        """The first two arguments of each command completed by ``data`` (name, and the SHA of an EVALSHA)."""
        self._buffer += data
        done, position = [], 0
        while (parsed := _command_at(self._buffer, position)) is not None:
            arguments, position = parsed
            done.append(arguments)
        self._buffer = self._buffer[position:]
        return done


def _command_at(buffer: bytes, position: int) -> tuple[list[bytes], int] | None:
    end = buffer.find(b"\r\n", position)
    if end < 0:
        return None
    if buffer[position:position + 1] != b"*":  # an inline command (redis-cli style): one line
        return buffer[position:end].split()[:2], end + 2
    count, position, arguments = int(buffer[position + 1:end]), end + 2, []
    for _ in range(count):
        end = buffer.find(b"\r\n", position)
        if end < 0:
            return None
        size = int(buffer[position + 1:end])
        if len(buffer) < end + 2 + size + 2:
            return None
        if len(arguments) < 2:
            arguments.append(buffer[end + 2:end + 2 + size])
        position = end + 2 + size + 2
    return arguments, position


class CountingProxy:
    """Listens on 127.0.0.1 (its own event loop on a daemon thread) and forwards to ``host:port``.

    ``script_names``: SHA1 -> script name, to tell one EVALSHA from another."""

    def __init__(self, host: str, port: int, script_names: dict[str, str]):
        self._upstream = (host, port)
        self._script_names = script_names
        self._commands: Counter = Counter()
        self._round_trips = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    def start(self) -> str:
        """Start listening; the redis:// URL that goes through the proxy."""
        threading.Thread(target=self._loop.run_forever, name="counting-proxy", daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=10)
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Stop listening, drop every connection and stop the loop."""
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)

    async def _close(self) -> None:
        # Closing every socket ends each connection's pumps (their reads see the end), so no task is cancelled.
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        if others:
            await asyncio.wait(others, timeout=5)

    def counts(self) -> Counts:
        """What has been sent through the proxy so far."""
        with self._lock:
            return Counts(Counter(self._commands), self._round_trips)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def _name(self, arguments: list[bytes]) -> str:
        name = arguments[0].decode(errors="replace").upper() if arguments else "?"
        if name == "EVALSHA" and len(arguments) > 1:
            return f"EVALSHA {self._script_names.get(arguments[1].decode(errors='replace').lower(), '?')}"
        return name

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection(*self._upstream)
        self._writers |= {client_writer, server_writer}
        answered = [True]  # the server has answered everything sent so far on this connection

        async def from_client() -> None:
            parser = CommandParser()
            while data := await client_reader.read(65536):
                names = [self._name(arguments) for arguments in parser.feed(data)]
                with self._lock:
                    if answered[0]:
                        self._round_trips += 1
                        answered[0] = False
                    self._commands.update(names)
                server_writer.write(data)
                await server_writer.drain()

        async def from_server() -> None:
            while data := await server_reader.read(65536):
                answered[0] = True
                client_writer.write(data)
                await client_writer.drain()

        pumps = [asyncio.create_task(from_client()), asyncio.create_task(from_server())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for writer in (client_writer, server_writer):
                writer.close()
                self._writers.discard(writer)
            await asyncio.gather(*pumps, return_exceptions=True)  # a reset connection ends a pump too
