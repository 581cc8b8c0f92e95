"""agentq's in-process runtime on the tool round-trip workload (bench/WORKLOAD.md), InMemoryRunner.

One invocation: create a session, send "Weather in Paris? #i", the scripted model calls get_weather, the tool
answers, the model answers in text (3 events). ``agentq_inmemory_rate(n)`` returns invocations per second.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from google.genai import types

from runtime.agents import LlmAgent
from runtime.models import LlmRequest, LlmResponse, ScriptedLlm
from runtime.runners import InMemoryRunner

APP = "bench"
USER = "u"
_USAGE = types.GenerateContentResponseUsageMetadata(
    prompt_token_count=10, candidates_token_count=5, total_token_count=15
)


def get_weather(city: str) -> dict:
    """Returns the current weather for a city."""
    return {"city": city, "forecast": "sunny", "temperature_c": 21}


def _respond(request: LlmRequest) -> LlmResponse:
    # Stateless, as on the ADK side: a function response last means this is the second call.
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or ()):
        part = types.Part(text="It is sunny in Paris, 21 C.")
    else:
        part = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=_USAGE)


def make_runner() -> InMemoryRunner:
    """The workload's agent in an InMemoryRunner."""
    agent = LlmAgent(
        name="weather_agent",
        model=ScriptedLlm(responder=_respond),
        instruction="Answer weather questions with the get_weather tool.",
        tools=[get_weather],
    )
    return InMemoryRunner(agent=agent, app_name=APP)


async def one_invocation(runner: InMemoryRunner, i: int) -> list:
    """Fresh session, one user message, every event the runner yields."""
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text=f"Weather in Paris? #{i}")])
    return [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=message)]


async def _rates(n: int, warmup: int) -> tuple[float, float]:
    runner = make_runner()
    for i in range(warmup):
        await one_invocation(runner, i)
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(n):
        events = await one_invocation(runner, i)
        assert len(events) == 3 and events[-1].is_final_response(), events
    return n / (time.perf_counter() - start), n / (time.process_time() - cpu_start)


def agentq_inmemory_rate(n: int = 2000, warmup: int = 100) -> float:
    """Invocations per second (wall clock) of the tool round trip on agentq's InMemoryRunner, one loop."""
    return asyncio.run(_rates(n, warmup))[0]


def main(argv: list[str]) -> None:
    """Print agentq's rate; with --adk, google-adk's on the same workload right after, and the ratio."""
    wall, cpu = asyncio.run(_rates(2000, 100))
    # per CPU second too: on a busy machine the wall rate mostly measures waiting for a core
    result = {"runtime": "agentq", "store": "memory", "per_second": round(wall, 1), "per_cpu_second": round(cpu, 1)}
    print(json.dumps(result))
    if "--adk" in argv:
        from bench.adk_env import run_adk_bench

        adk = run_adk_bench("inmemory_tool_roundtrip.py")
        print(json.dumps(adk))
        print(f"agentq InMemoryRunner {result['per_second']}/s vs google-adk {adk['per_second']}/s: "
              f"{wall / adk['per_second']:.2f}x wall, {cpu / adk['per_cpu_second']:.2f}x per CPU second "
              "(target >= 5x)")


if __name__ == "__main__":
    main(sys.argv[1:])
