"""API benchmark: enqueue -> first event frame through the HTTP API (target p50 <= 5 ms).

Starts a real stack (embedded redis-server with AOF, one ``agentq worker``, one ``agentq api``) with the offline
weather example, then measures, one invocation at a time over keep-alive connections, the figures interleaved:
- ``POST /run_sse`` through httpx: from sending the request to receiving the first event frame (enqueue,
  dispatch, worker pickup, first model event, SSE): the figure a client sees, and the target's;
- ``POST .../invocations`` (202) and then ``GET /invocations/{id}/events``: enqueue latency, and from the
  enqueue request to the first event frame (status frames skipped);
- ``POST /run_sse`` again over a bare keep-alive socket, without httpx's own per-request cost: the
  difference between the two is httpx's share of the first figure, the rest is the server's;
- the same through ``AgentqClient`` in the bench process, up to the first event ``/run_sse`` would send (the
  first one not written by the user: the user's own message is committed first and is never framed), so the
  API's own share is the difference between it and the bare-socket figure. The bench process runs asyncio's
  own loop and the API uvloop, so a share within a few tenths of a millisecond of zero (either side) is noise.

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


async def run_sse_once(http: httpx.AsyncClient, session_id: str) -> float:
    """POST /run_sse through httpx: seconds to the first event frame (the stream is then drained)."""
    body = {"appName": "weather", "userId": "bench", "sessionId": session_id, "newMessage": MESSAGE}
    t0 = time.perf_counter()
    async with http.stream("POST", "/run_sse", json=body) as response:
        return await _first_data_line(response, skip_status=False) - t0


class RawConnection:
    """One keep-alive HTTP/1.1 connection driven by hand, so no client library's cost is in the figure."""

    def __init__(self, base_url: str):
        self.host, port = base_url.rsplit("//", 1)[1].split(":")
        self.port = int(port)

    async def __aenter__(self) -> RawConnection:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.writer.close()
        await self.writer.wait_closed()

    async def run_sse(self, session_id: str) -> float:
        """POST /run_sse: seconds to the first event frame (the response is then read to its end)."""
        body = json.dumps({"appName": "weather", "userId": "bench", "sessionId": session_id,
                           "newMessage": MESSAGE}).encode()
        request = (f"POST /run_sse HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        t0 = time.perf_counter()
        self.writer.write(request)
        received, first = b"", None
        # The response is chunked: it ends with the zero-length chunk, and the connection stays open.
        while not received.endswith(b"\r\n0\r\n\r\n"):
            chunk = await self.reader.read(65536)
            if not chunk:
                raise ConnectionError("the API closed the connection mid-response")
            received += chunk
            if first is None and b"\ndata: " in received:
                first = time.perf_counter()
        return (first or time.perf_counter()) - t0


async def queue_routes_once(http: httpx.AsyncClient, session_id: str) -> tuple[float, float]:
    """POST .../invocations then GET /invocations/{id}/events: seconds to the 202, and to the first event frame."""
    t0 = time.perf_counter()
    response = await http.post(f"/apps/weather/users/bench/sessions/{session_id}/invocations",
                               json={"newMessage": MESSAGE})
    enqueued = time.perf_counter() - t0
    invocation_id = response.json()["invocationId"]
    async with http.stream("GET", f"/invocations/{invocation_id}/events") as events:
        return enqueued, await _first_data_line(events, skip_status=True) - t0


async def direct_once(client, session_id: str) -> float:
    """The same enqueue -> first event through AgentqClient in this process: the floor the API adds to.

    The first event is the one /run_sse frames first: status entries and the user's own message (committed
    before the model is called) are passed over, as the API does.
    """
    t0 = time.perf_counter()
    invocation_id = await client.enqueue("weather", "bench", session_id, MESSAGE)
    first = None
    async for entry in client.events(invocation_id):
        if first is None and entry.kind == "event" and entry.data.get("author") != "user":
            first = time.perf_counter()
    return (first or time.perf_counter()) - t0


FIGURES = ("run_sse", "raw", "direct", "enqueue", "first_event")


async def _measure(base_url: str, redis_url: str, n: int, warmup: int) -> dict:
    from worker.client import AgentqClient

    samples: dict[str, list[float]] = {name: [] for name in FIGURES}
    async with (httpx.AsyncClient(base_url=base_url, timeout=30) as http, RawConnection(base_url) as raw,
                AgentqClient(redis_url) as client):
        sessions = [(await http.post("/apps/weather/users/bench/sessions")).json()["id"]
                    for _ in range(4 * (n + warmup))]
        # Interleaved, one of each per round: every figure sees the same machine, so their differences
        # (httpx's own cost, the API's own share) do not drift with whatever else the machine is doing.
        for round_ in range(n + warmup):
            figures = (await run_sse_once(http, sessions.pop()), await raw.run_sse(sessions.pop()),
                       await direct_once(client, sessions.pop()), *await queue_routes_once(http, sessions.pop()))
            if round_ >= warmup:
                for name, value in zip(FIGURES, figures, strict=True):
                    samples[name].append(value)
    run_sse, raw_, direct = samples["run_sse"], samples["raw"], samples["direct"]
    return {
        "invocations": n,
        "run_sse_first_frame_p50_ms": _ms(run_sse, 0.5),
        "run_sse_first_frame_p90_ms": _ms(run_sse, 0.9),
        "run_sse_first_frame_mean_ms": round(statistics.mean(run_sse) * 1000, 3),
        "enqueue_202_p50_ms": _ms(samples["enqueue"], 0.5),
        "enqueue_to_first_event_frame_p50_ms": _ms(samples["first_event"], 0.5),
        "enqueue_to_first_event_frame_p90_ms": _ms(samples["first_event"], 0.9),
        "run_sse_raw_socket_first_frame_p50_ms": _ms(raw_, 0.5),
        "run_sse_raw_socket_first_frame_p90_ms": _ms(raw_, 0.9),
        "httpx_own_cost_p50_ms": round(_ms(run_sse, 0.5) - _ms(raw_, 0.5), 3),
        "direct_client_first_event_p50_ms": _ms(direct, 0.5),
        "api_overhead_p50_ms": round(_ms(raw_, 0.5) - _ms(direct, 0.5), 3),
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
          f"p90 {results['run_sse_raw_socket_first_frame_p90_ms']} ms   "
          f"(httpx's own cost: {results['httpx_own_cost_p50_ms']} ms at p50)")
    print(f"  same through AgentqClient in-process  p50 {results['direct_client_first_event_p50_ms']} ms   "
          f"(the API adds {results['api_overhead_p50_ms']} ms at p50, bare socket vs in-process client)")


def main() -> None:
    """Run and print; the JSON figures go to stdout last."""
    results = run()
    _print(results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
