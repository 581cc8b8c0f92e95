"""ADK 2 workflows, durable on agentq's workers, beside google-adk 2.13's in-memory Runner; Redis cost per node.

    .venv/bin/python -m bench.workflow_bench            # prints a table and a JSON line, writes bench/results/workflow.json
    .venv/bin/python -m bench.workflow_bench --quick    # smaller counts

DESIGN.md section 7: "ADK 2 workflows run durable at one Redis round trip per node boundary, and at least as
fast as google-adk's in-memory Runner on the same workflow". Measured side by side in one run, on the
workflows of bench/workflow_shapes.py (one module builds them for both libraries):
- rate: ``wf_chain10`` (ten function nodes passing their input on) and ``wf_agent3`` (fetch -> LlmAgent with a
  model answering at once -> publish). agentq: create_session + enqueue -> completed observed through
  ``AgentqClient``, ``--window`` invocations in flight (durable work waits on Redis, as bench/worker_bench.py
  runs it), on one ``agentq worker`` process and a private redis-server; every session's committed node outputs
  are checked afterwards. google-adk: InMemoryRunner, create_session + run_async, one at a time in one process
  (bench/adk_side/workflow_inmemory.py, bench/.adk-venv). Both after a warm-up.
- Redis cost per node: one worker behind a counting proxy (bench/redis_counter.py), invocations one at a time;
  the round trips, commands and session commits (EVALSHA commit_event) it sends per invocation of ``wf_chain10``
  and of ``wf_chain1`` (one node). What a workflow costs per node is their difference over the 9 extra nodes;
  the worker's idle background (broker polls, heartbeats), measured just before, is taken off first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from .redis_counter import CountingProxy, Counts
from .worker_bench import agentq_workers, cpu_seconds, print_checks
from .workflow_shapes import ANSWER, APP_NODES, CHAIN_NODES, message

ROOT = Path(__file__).resolve().parents[1]
APPS = [f"bench.workflow_apps:{name}" for name in APP_NODES]
RATED = ["wf_chain10", "wf_agent3"]


async def _invoke(client, app: str, user: str, index: int) -> tuple[str, str]:
    """One invocation on a fresh session, enqueue -> completed; (session id, final status)."""
    session = await client.create_session(app, user)
    invocation_id = await client.enqueue(app, user, session.id, message(index))
    return session.id, (await client.wait(invocation_id, timeout=120)).status


async def durable_rate(url: str, app: str, n: int, warmup: int, window: int, worker_pid: int, redis_pid: int) -> dict:
    """Invocations per second of ``app`` with ``window`` in flight; checks every committed history after."""
    from worker.client import AgentqClient

    client = AgentqClient(url)
    user = f"{app}-{time.time_ns()}"
    gate = asyncio.Semaphore(window)

    async def one(index: int) -> tuple[str, str]:
        async with gate:
            return await _invoke(client, app, user, index)

    await asyncio.gather(*[one(index) for index in range(warmup)])
    cpu = (cpu_seconds(worker_pid), cpu_seconds(redis_pid), time.process_time())
    started = time.perf_counter()
    done = await asyncio.gather(*[one(index) for index in range(n)])
    elapsed = time.perf_counter() - started
    used = (cpu_seconds(worker_pid), cpu_seconds(redis_pid), time.process_time())
    bad = sum([not await _history_ok(client, app, user, session_id, index)
               for index, (session_id, _) in enumerate(done)])
    await client.aclose()
    worker, redis, own = ((b - a) * 1000 / n for a, b in zip(cpu, used, strict=True))
    return {"n": n, "window": window, "rate": n / elapsed,
            "cpu_ms_per_invocation": {"worker": worker, "redis": redis, "client": own},
            "not_completed": sum(status != "completed" for _, status in done), "bad_histories": bad}


async def _history_ok(client, app: str, user: str, session_id: str, index: int) -> bool:
    """The session holds one output per node, once each, the last being what the workflow should end with (the
    LlmAgent node's output is its answer: an event with content, authored by the agent)."""
    session = await client.session_service.get_session(app_name=app, user_id=user, session_id=session_id)
    outputs = [e for e in session.events if e.output is not None or (e.author == "writer" and e.content)]
    last = f"published: {ANSWER}" if app == "wf_agent3" else message(index)
    return len(outputs) == APP_NODES[app] and outputs[-1].output == last


async def redis_cost(url: str, proxy: CountingProxy, n: int, idle_s: float) -> dict:
    """What the proxied worker sends per invocation of each app, one invocation at a time."""
    from runtime.redis_store.scripts import COMMIT_EVENT
    from worker.client import AgentqClient

    commit = f"EVALSHA {COMMIT_EVENT.name}"  # as the proxy names a session commit
    client = AgentqClient(url)
    user = f"cost-{time.time_ns()}"
    await asyncio.sleep(1.0)  # let the just-started worker settle
    before = proxy.counts()
    await asyncio.sleep(idle_s)
    idle = proxy.counts() - before
    results: dict = {"idle_per_second": {"round_trips": idle.round_trips / idle_s,
                                         "commands": dict(sorted(_scaled(idle, 1 / idle_s).items()))}}
    for app in APP_NODES:
        for index in range(20):  # warm-up: imports, script cache, history cache
            await _invoke(client, app, user, index)
        await asyncio.sleep(0.2)
        before, started = proxy.counts(), time.perf_counter()
        statuses = [(await _invoke(client, app, user, index))[1] for index in range(n)]
        await asyncio.sleep(0.05)  # the worker's last steps after the status the client saw
        sent, elapsed = proxy.counts() - before, time.perf_counter() - started
        background = elapsed / idle_s
        commands = {name: count / n - idle.commands.get(name, 0) * background / n
                    for name, count in sorted(sent.commands.items())}
        results[app] = {
            "n": n, "nodes": APP_NODES[app], "not_completed": sum(s != "completed" for s in statuses),
            "round_trips": (sent.round_trips - idle.round_trips * background) / n,
            "commands": sum(commands.values()), "commits": commands.get(commit, 0.0),
            "by_command": {name: round(value, 3) for name, value in commands.items()},
        }
    await client.aclose()
    extra = CHAIN_NODES - 1
    chain, one = results["wf_chain10"], results["wf_chain1"]
    results["per_node"] = {key: (chain[key] - one[key]) / extra for key in ("round_trips", "commands", "commits")}
    results["per_node_overall"] = {key: chain[key] / CHAIN_NODES for key in ("round_trips", "commands", "commits")}
    return results


def _scaled(counts: Counts, factor: float) -> dict[str, float]:
    return {name: count * factor for name, count in counts.commands.items()}


def adk_rate(app: str, n: int) -> dict:
    """google-adk's InMemoryRunner on ``app``, in bench/.adk-venv (bench/adk_side/workflow_inmemory.py)."""
    from bench.adk_env import run_adk_bench

    return run_adk_bench("workflow_inmemory.py", "--apps", app, "--n", n, "--warmup", 100)["apps"][app]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="agentq invocations per app in the rate runs")
    parser.add_argument("--adk-n", type=int, default=None, help="google-adk invocations per app")
    parser.add_argument("--window", type=int, default=256, help="agentq invocations in flight")
    parser.add_argument("--cost-n", type=int, default=None, help="invocations per app counted through the proxy")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--skip", action="append", default=[], help="adk|rate|cost")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "workflow.json"))
    args = parser.parse_args(argv)
    n = args.n or (300 if args.quick else 2000)
    adk_n = args.adk_n or (200 if args.quick else 1000)
    cost_n = args.cost_n or (30 if args.quick else 100)
    from runtime.redis_store import scripts
    from runtime.redis_store.launcher import EmbeddedRedis

    results: dict = {"machine_cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()[0], "adk": {}, "agentq": {}}
    if "rate" not in args.skip:
        with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
            with agentq_workers(server.url, ["bench-wf1"], threads=args.threads, apps=APPS) as workers:
                pids = workers["bench-wf1"].pid, server._process.pid
                # Each workflow on google-adk, then right after on agentq (the idle worker waits meanwhile), so
                # that the two rates of one workflow see the same load on a shared machine.
                for app in RATED:
                    if "adk" not in args.skip:
                        results["adk"][app] = adk_rate(app, adk_n)
                    results["agentq"][app] = asyncio.run(durable_rate(server.url, app, n, min(n, 200), args.window,
                                                                      *pids))
    # A redis-server of its own: on the rate runs' server, the counted worker once spent its idle window taking
    # and dropping run jobs the stopped rate worker had left (Celery's redelivery), which is no per-node cost.
    if "cost" not in args.skip:
        with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
            proxy = CountingProxy("127.0.0.1", server.port, {s.sha: s.name for s in scripts.ALL.values()})
            try:
                with agentq_workers(proxy.start(), ["bench-wf-count"], threads=args.threads, apps=APPS):
                    results["redis_cost"] = asyncio.run(redis_cost(server.url, proxy, cost_n, idle_s=2.0))
            finally:
                proxy.stop()
    results["summary"] = summarise(results)
    report(results)
    print(json.dumps(results))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0  # a missed target is a MISS line, not an exit error, as in the other parts


def summarise(results: dict) -> dict:
    """Per rated workflow: both rates, their ratio, and CPU ms per invocation on each side and its ratio."""
    summary = {}
    for app in RATED:
        ours, theirs = results["agentq"].get(app), results["adk"].get(app)
        if not (ours and theirs):
            continue
        cpu = sum(ours["cpu_ms_per_invocation"].values())  # worker + redis-server + the enqueuing client
        adk_cpu = 1000 / theirs["per_cpu_second"]
        summary[app] = {"agentq_per_second": round(ours["rate"], 1), "adk_per_second": theirs["per_second"],
                        "ratio": round(ours["rate"] / theirs["per_second"], 2),
                        "agentq_cpu_ms": round(cpu, 2), "adk_cpu_ms": round(adk_cpu, 2),
                        "cpu_ratio": round(adk_cpu / cpu, 2)}
    return summary


def report(results: dict) -> bool:
    """The human table and PASS/MISS lines; True when every check passed."""
    print(f"workflows on {results['machine_cpus']} cores (load average {results['loadavg_at_start']:.1f} at start)")
    checks = []
    for app in sorted(set(results["agentq"]) - set(results["summary"])):  # no google-adk figure to compare with
        print(f"  {app}: agentq durable {results['agentq'][app]['rate']:.0f}/s")
    if results["summary"]:
        print(f"  {'workflow':<12}{'agentq durable/s':>18}{'google-adk in-memory/s':>24}{'ratio':>8}   "
              f"CPU ms/invocation: agentq (worker+redis+client) vs google-adk")
    for app, row in results["summary"].items():
        cpu = results["agentq"][app]["cpu_ms_per_invocation"]
        print(f"  {app:<12}{row['agentq_per_second']:>18.0f}{row['adk_per_second']:>24.0f}{row['ratio']:>7.2f}x   "
              f"{row['agentq_cpu_ms']:.2f} ({cpu['worker']:.2f}+{cpu['redis']:.2f}+{cpu['client']:.2f}) vs "
              f"{row['adk_cpu_ms']:.2f}: {row['cpu_ratio']:.2f}x")
        checks.append((f"{app}: agentq durable {row['agentq_per_second']:.0f}/s vs google-adk in-memory "
                       f"{row['adk_per_second']:.0f}/s: {row['ratio']:.2f}x (target >= 1x)", row["ratio"] >= 1))
    for app, run in results["agentq"].items():
        lost = run["not_completed"] + run["bad_histories"]
        checks.append((f"{app}: invocations not completed or with a wrong history: {lost} of {run['n']}", not lost))
    cost = results.get("redis_cost")
    if cost:
        print(f"  the worker's Redis traffic per invocation, one at a time (idle background of "
              f"{cost['idle_per_second']['round_trips']:.1f} round trips/s taken off):")
        print(f"  {'workflow':<12}{'nodes':>6}{'round trips':>13}{'commands':>10}{'commits':>9}")
        for app in APP_NODES:
            row = cost[app]
            print(f"  {app:<12}{row['nodes']:>6}{row['round_trips']:>13.2f}{row['commands']:>10.2f}"
                  f"{row['commits']:>9.2f}")
        counted = sum(cost[app]["not_completed"] for app in APP_NODES)
        checks.append((f"counted invocations not completed: {counted}", not counted))
        per, overall = cost["per_node"], cost["per_node_overall"]
        print(f"  per node, (wf_chain10 - wf_chain1) / 9: {per['round_trips']:.2f} round trips, "
              f"{per['commands']:.2f} commands, {per['commits']:.2f} commits; wf_chain10 / 10 (fixed cost "
              f"included): {overall['round_trips']:.2f} round trips, {overall['commits']:.2f} commits")
        checks.append((f"Redis round trips per node boundary: {per['round_trips']:.2f} (target 1)",
                       per["round_trips"] <= 1.05))
        checks.append((f"session commits per node boundary: {per['commits']:.2f} (target 1)",
                       abs(per["commits"] - 1) <= 0.05))
    return print_checks(checks)


def _fmt(value: float | None, spec: str = ".0f", unit: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{unit}"


if __name__ == "__main__":
    sys.exit(main())
