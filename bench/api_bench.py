"""API benchmark: enqueue -> first event frame through the HTTP API (target p50 <= 5 ms).

Starts a real stack (embedded redis-server with AOF, one ``agentq worker``, one ``agentq api``) with the offline
weather example, then measures, one invocation at a time over a keep-alive connection:
- ``POST /run_sse``: from sending the request to receiving the first event frame (enqueue, dispatch, worker
  pickup, first model event, SSE);
- ``POST .../invocations`` (202) and then ``GET /invocations/{id}/events``: enqueue latency, and from the
  enqueue request to the first event frame (status frames skipped);
- ``POST /run_sse`` again over a bare socket, without httpx's own per-request cost (about 1 ms here);
- the same through ``AgentqClient`` in the bench process, so the API's own share is the difference.

Run: ``python -m bench.api_bench``. ``run()`` returns the figures as a dict; the table goes to stdout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time

import httpx

from agentq.local_stack import LocalStack

APPS = ["examples.weather:app"]
MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)


async def _first_data_line(response: httpx.Response, *, skip_status: bool) -> float:
    """Time at which the first event frame's data line arrived; then drain the stream."""
    first = None
    event = "message"
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and first is None:
            if not (skip_status and event == "status"):
                first = time.perf_counter()
        elif line == "":
            event = "message"
    return first if first is not None else time.perf_counter()


async def bench_run_sse(http: httpx.AsyncClient, sessions: list[str]) -> list[float]:
    samples = []
    for session_id in sessions:
        body = {"appName": "weather", "userId": "bench", "sessionId": session_id, "newMessage": MESSAGE}
        t0 = time.perf_counter()
        async with http.stream("POST", "/run_sse", json=body) as response:
            samples.append(await _first_data_line(response, skip_status=False) - t0)
    return samples


async def bench_run_sse_raw(base_url: str, sessions: list[str]) -> list[float]:
    """POST /run_sse over a bare socket (no HTTP client library), so the figure is the server's, not httpx's."""
    host, port = base_url.rsplit("//", 1)[1].split(":")
    samples = []
    for session_id in sessions:
        body = json.dumps({"appName": "weather", "userId": "bench", "sessionId": session_id,
                           "newMessage": MESSAGE}).encode()
        request = (f"POST /run_sse HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
        reader, writer = await asyncio.open_connection(host, int(port))
        t0 = time.perf_counter()
        writer.write(request)
        received, first = b"", None
        while chunk := await reader.read(65536):
            received += chunk
            if first is None and b"\ndata: " in received:
                first = time.perf_counter()
        samples.append((first or time.perf_counter()) - t0)
        writer.close()
        await writer.wait_closed()
    return samples


async def bench_queue_routes(http: httpx.AsyncClient, sessions: list[str]) -> tuple[list[float], list[float]]:
    enqueue, first_event = [], []
    for session_id in sessions:
        t0 = time.perf_counter()
        response = await http.post(f"/apps/weather/users/bench/sessions/{session_id}/invocations",
                                   json={"newMessage": MESSAGE})
        enqueue.append(time.perf_counter() - t0)
        invocation_id = response.json()["invocationId"]
        async with http.stream("GET", f"/invocations/{invocation_id}/events") as events:
            first_event.append(await _first_data_line(events, skip_status=True) - t0)
    return enqueue, first_event


async def bench_direct_client(redis_url: str, sessions: list[str]) -> list[float]:
    """The same enqueue -> first event through AgentqClient in this process: the floor the API adds to."""
    from worker.client import AgentqClient

    samples = []
    async with AgentqClient(redis_url) as client:
        for session_id in sessions:
            t0 = time.perf_counter()
            invocation_id = await client.enqueue("weather", "bench", session_id, MESSAGE)
            first = None
            async for entry in client.events(invocation_id):
                if first is None and entry.kind == "event":
                    first = time.perf_counter()
            samples.append((first or time.perf_counter()) - t0)
    return samples


async def _measure(base_url: str, redis_url: str, n: int, warmup: int) -> dict:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
        sessions = []
        for _ in range(4 * (n + warmup)):
            sessions.append((await http.post("/apps/weather/users/bench/sessions")).json()["id"])
        await bench_run_sse(http, sessions[:warmup])
        run_sse = await bench_run_sse(http, sessions[warmup: warmup + n])
        rest = sessions[warmup + n:]
        await bench_queue_routes(http, rest[:warmup])
        enqueue, first_event = await bench_queue_routes(http, rest[warmup: warmup + n])
        rest = rest[warmup + n:]
        await bench_direct_client(redis_url, rest[:warmup])
        direct = await bench_direct_client(redis_url, rest[warmup: warmup + n])
        rest = rest[warmup + n:]
        await bench_run_sse_raw(base_url, rest[:warmup])
        raw = await bench_run_sse_raw(base_url, rest[warmup: warmup + n])
    return {
        "invocations": n,
        "run_sse_first_frame_p50_ms": _ms(run_sse, 0.5),
        "run_sse_first_frame_p90_ms": _ms(run_sse, 0.9),
        "run_sse_first_frame_mean_ms": round(statistics.mean(run_sse) * 1000, 3),
        "enqueue_202_p50_ms": _ms(enqueue, 0.5),
        "enqueue_to_first_event_frame_p50_ms": _ms(first_event, 0.5),
        "enqueue_to_first_event_frame_p90_ms": _ms(first_event, 0.9),
        "run_sse_raw_socket_first_frame_p50_ms": _ms(raw, 0.5),
        "run_sse_raw_socket_first_frame_p90_ms": _ms(raw, 0.9),
        "direct_client_first_event_p50_ms": _ms(direct, 0.5),
        "api_overhead_p50_ms": round(_ms(raw, 0.5) - _ms(direct, 0.5), 3),
        "target_p50_ms": 5.0,
    }


def run(n: int = 200, warmup: int = 20) -> dict:
    """Start the stack, measure, stop it; the figures."""
    with tempfile.TemporaryDirectory(prefix="agentq-api-bench-") as data_dir:
        with LocalStack(data_dir, apps=APPS, extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}) as stack:
            return asyncio.run(_measure(stack.base_url, stack.redis.url, n, warmup))


def _print(results: dict) -> None:
    print("api bench (agentq api + 1 agentq worker + embedded redis-server, offline weather app, sequential)")
    print(f"  POST /run_sse -> first event frame   p50 {results['run_sse_first_frame_p50_ms']} ms   "
          f"p90 {results['run_sse_first_frame_p90_ms']} ms   (target p50 <= {results['target_p50_ms']} ms)")
    print(f"  POST .../invocations (202)          p50 {results['enqueue_202_p50_ms']} ms")
    print(f"  enqueue -> first event frame (GET /invocations/{{id}}/events)   "
          f"p50 {results['enqueue_to_first_event_frame_p50_ms']} ms   "
          f"p90 {results['enqueue_to_first_event_frame_p90_ms']} ms")
    print(f"  POST /run_sse over a bare socket -> first event frame   "
          f"p50 {results['run_sse_raw_socket_first_frame_p50_ms']} ms   "
          f"p90 {results['run_sse_raw_socket_first_frame_p90_ms']} ms")
    print(f"  same through AgentqClient in-process  p50 {results['direct_client_first_event_p50_ms']} ms   "
          f"(the API adds {results['api_overhead_p50_ms']} ms at p50, bare socket vs in-process client)")


def main() -> None:
    """Run and print; the JSON figures go to stdout last."""
    results = run()
    _print(results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
