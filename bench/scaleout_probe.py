"""What `python -m bench scaleout` reads at the start and the end of its measuring window: every redis-server's CPU
(INFO cpu) and commands (INFO commandstats, which counts the commands a Lua script runs as well as the EVALSHA
itself), and the CPU of the worker processes (with any children) from /proc through psutil.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import psutil

from .scaleout_stores import Server


@dataclass(frozen=True, kw_only=True)
class ServerReading:
    """One redis-server's CPU seconds and commands by name so far."""

    cpu_s: float
    commands: Counter = field(default_factory=Counter)


@dataclass(frozen=True, kw_only=True)
class Reading:
    """Everything read at one instant: when, how many were done, each server, the workers' CPU."""

    at: float
    done: int
    servers: dict[int, ServerReading]
    worker_cpu_s: float


def read_server(server: Server) -> ServerReading:
    """INFO cpu and INFO commandstats of ``server`` (user + system CPU; ``cmdstat_hget`` -> ``HGET``)."""
    with server.client() as client:
        cpu = client.info("cpu")
        stats = client.info("commandstats")
    commands = Counter({name.removeprefix("cmdstat_").upper(): int(value["calls"]) for name, value in stats.items()})
    return ServerReading(cpu_s=float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), commands=commands)


def process_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of the processes ``pids``, their live descendants and the children they reaped
    (0 for one that is gone)."""
    total = 0.0
    for pid in pids:
        try:
            process = psutil.Process(pid)
            for each in [process, *process.children(recursive=True)]:
                times = each.cpu_times()  # children_*: children that ended (a quarantine run's fork, say)
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return total


def read(servers: list[Server], worker_pids: list[int], done: int) -> Reading:
    """A reading of ``servers`` and the workers, ``done`` being the count the caller just observed."""
    return Reading(at=time.perf_counter(), done=done, servers={s.port: read_server(s) for s in servers},
                   worker_cpu_s=process_cpu_s(worker_pids))


def window(first: Reading, last: Reading, servers: list[Server]) -> dict:
    """The figures between two readings, per invocation done in between (the table's columns)."""
    done = last.done - first.done
    elapsed = last.at - first.at
    cpu = {s.port: last.servers[s.port].cpu_s - first.servers[s.port].cpu_s for s in servers}
    commands = {s.port: last.servers[s.port].commands - first.servers[s.port].commands for s in servers}
    store_commands = sum((commands[s.port] for s in servers if s.store), Counter())
    all_commands = sum(commands.values(), Counter())
    store_cpu = sum(cpu[s.port] for s in servers if s.store)
    return {
        "done": done,
        "seconds": elapsed,
        "rate": done / elapsed,
        "redis_cpu_ms_per_1000": sum(cpu.values()) * 1e6 / done,
        "store_cpu_ms_per_1000": store_cpu * 1e6 / done,
        "busiest_redis_cores": max(cpu.values()) / elapsed,
        "commands_per_invocation": sum(all_commands.values()) / done,
        "store_commands_per_invocation": sum(store_commands.values()) / done,
        "top_commands_per_invocation": {name: round(calls / done, 2)
                                        for name, calls in all_commands.most_common(16)},
        "worker_cpu_ms_per_invocation": (last.worker_cpu_s - first.worker_cpu_s) * 1000 / done,
    }
