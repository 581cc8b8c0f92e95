"""The clients `python -m bench glide` compares, each sending the same round: EVALSHA of a small script (bench/
glide_mix.lua), an XADD and an HGET, the three sent together and awaited together, as a worker's commit does.

- ``mux``: agentq's hand-written pipelined connection (runtime/redis_store/mux.py) on one Redis; on a Cluster,
  ``mux per node``, a sketch of the per-node mux issue 26 asks about: the slot map from CLUSTER SLOTS (the
  embedded redis-server is 6.2, without CLUSTER SHARDS) and one MuxConnection per master, the round's three
  commands routed by the slot of their shared hash tag. It handles no MOVED/ASK (the slots do not move here).
- ``redis-py``: what agentq's store uses on a Cluster today (redis.asyncio.RedisCluster, a pool per node).
- ``glide``: valkey-glide's async client (Rust core, one multiplexed connection per node), the three commands as
  concurrent calls (``invoke_script`` loads the script itself on NOSCRIPT).
- ``glide batch``: the same three in one non-atomic glide Batch (``exec``), the script as a raw EVALSHA.

Each side is an object with ``round(tag)`` (one round on keys with that hash tag) and ``close()``.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

SCRIPT = (Path(__file__).parent / "glide_mix.lua").read_text()
SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()


def _keys(tag: str) -> tuple[str, str, str]:
    return f"gb:{{{tag}}}:h", f"gb:{{{tag}}}:s", f"gb:{{{tag}}}:v"


class MuxSide:
    """runtime/redis_store/mux.py on one redis-server."""

    name = "mux"

    def __init__(self, url: str):
        from runtime.redis_store.mux import MuxConnection

        self._mux = MuxConnection(url)

    async def start(self) -> None:
        """Load the script (EVALSHA then finds it)."""
        await self._mux.script_load(SCRIPT)

    def round(self, tag: str):
        """The three commands, queued at once on the one connection."""
        from runtime.redis_store.mux import queue_command

        counter, stream, value = _keys(tag)
        return asyncio.gather(
            queue_command(self._mux, "EVALSHA", SHA, 1, counter, "n"),
            queue_command(self._mux, "XADD", stream, "MAXLEN", "~", 100, "*", "e", "x"),
            queue_command(self._mux, "HGET", value, "f"))

    async def close(self) -> None:
        """Close the connection."""
        await self._mux.aclose()


class MuxPerNodeSide(MuxSide):
    """One MuxConnection per master, chosen by the hash tag's slot from a CLUSTER SLOTS map read at start."""

    name = "mux per node"

    def __init__(self, ports: list[int]):
        self._ports = ports
        self._by_slot: list = []
        self._nodes: dict = {}

    async def start(self) -> None:
        """Read the slot map from the first node, connect to every master, load the script on each."""
        from runtime.redis_store.mux import MuxConnection

        first = MuxConnection(f"redis://127.0.0.1:{self._ports[0]}/0")
        ranges = await first.execute_command("CLUSTER", "SLOTS")
        await first.aclose()
        self._by_slot = [None] * 16384
        for start, end, master, *_ in ranges:
            port = int(master[1])
            if port not in self._nodes:
                self._nodes[port] = MuxConnection(f"redis://127.0.0.1:{port}/0")
                await self._nodes[port].script_load(SCRIPT)
            for slot in range(int(start), int(end) + 1):
                self._by_slot[slot] = self._nodes[port]

    def round(self, tag: str):
        """The three commands on the connection of the master serving the tag's slot."""
        from redis.crc import key_slot

        from runtime.redis_store.mux import queue_command

        counter, stream, value = _keys(tag)
        node = self._by_slot[key_slot(counter.encode())]
        return asyncio.gather(
            queue_command(node, "EVALSHA", SHA, 1, counter, "n"),
            queue_command(node, "XADD", stream, "MAXLEN", "~", 100, "*", "e", "x"),
            queue_command(node, "HGET", value, "f"))

    async def close(self) -> None:
        """Close every node's connection."""
        for node in self._nodes.values():
            await node.aclose()


class RedisPySide:
    """redis-py's asyncio client: Redis on one server, RedisCluster on a Cluster (agentq's store today)."""

    name = "redis-py"

    def __init__(self, url: str):
        from runtime.redis_store.connection import MAX_CONNECTIONS, cluster_options
        from runtime.redis_store.redis_url import is_cluster, redis_client_from_url

        extra = cluster_options() if is_cluster(url) else {}
        # three commands in flight per coroutine, each on a pooled connection: the pool must not refuse them
        self._client = redis_client_from_url(url, decode_responses=True, max_connections=4 * MAX_CONNECTIONS,
                                             socket_connect_timeout=30, socket_timeout=30, **extra)

    async def start(self) -> None:
        """Load the script on every primary."""
        await self._client.script_load(SCRIPT)

    def round(self, tag: str):
        """The three commands as concurrent calls (the cluster client routes each by its key)."""
        counter, stream, value = _keys(tag)
        return asyncio.gather(self._client.evalsha(SHA, 1, counter, "n"),
                              self._client.xadd(stream, {"e": "x"}, maxlen=100, approximate=True),
                              self._client.hget(value, "f"))

    async def close(self) -> None:
        """Close the client's connections."""
        await self._client.aclose()


class GlideSide:
    """valkey-glide's async client (standalone or cluster), the three commands as concurrent calls."""

    name = "glide"

    def __init__(self, ports: list[int], cluster: bool):
        self._ports = ports
        self._cluster = cluster
        self._client = None

    async def start(self) -> None:
        """Connect (a cluster client discovers the other nodes from the first)."""
        from glide import (
            GlideClient,
            GlideClientConfiguration,
            GlideClusterClient,
            GlideClusterClientConfiguration,
            NodeAddress,
            Script,
        )

        addresses = [NodeAddress("127.0.0.1", port) for port in self._ports]
        if self._cluster:
            self._client = await GlideClusterClient.create(GlideClusterClientConfiguration(addresses))
        else:
            self._client = await GlideClient.create(GlideClientConfiguration(addresses))
        self._script = Script(SCRIPT)

    def round(self, tag: str):
        """invoke_script, xadd and hget, awaited together."""
        from glide import StreamAddOptions, TrimByMaxLen

        counter, stream, value = _keys(tag)
        trim = StreamAddOptions(trim=TrimByMaxLen(exact=False, threshold=100))
        return asyncio.gather(self._client.invoke_script(self._script, keys=[counter], args=["n"]),
                              self._client.xadd(stream, [("e", "x")], trim), self._client.hget(value, "f"))

    async def close(self) -> None:
        """Close the client."""
        await self._client.close()


class GlideBatchSide(GlideSide):
    """The same three commands in one non-atomic glide batch (a pipeline)."""

    name = "glide batch"

    async def start(self) -> None:
        """Connect, and load the script on every primary (a batch's EVALSHA does not load it)."""
        await super().start()
        from glide import AllPrimaries

        if self._cluster:
            await self._client.custom_command(["SCRIPT", "LOAD", SCRIPT], AllPrimaries())
        else:
            await self._client.custom_command(["SCRIPT", "LOAD", SCRIPT])

    def round(self, tag: str):
        """One Batch(is_atomic=False) with the three commands."""
        from glide import Batch, ClusterBatch

        counter, stream, value = _keys(tag)
        batch = ClusterBatch(is_atomic=False) if self._cluster else Batch(is_atomic=False)
        batch.custom_command(["EVALSHA", SHA, "1", counter, "n"])
        batch.custom_command(["XADD", stream, "MAXLEN", "~", "100", "*", "e", "x"])
        batch.hget(value, "f")
        return self._client.exec(batch, raise_on_error=True)
