"""The tool round-trip workload, google-adk side (runs ONLY inside bench/.adk-venv).

bench/WORKLOAD.md is the contract; the agentq side mirrors it. Shared by the
memory and sqlite scripts so both time exactly the same thing and differ only
in the SessionService handed to the Runner.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.genai import types

APP = "bench"
USER = "u"


def get_weather(city: str) -> dict:
    """Returns the current weather for a city."""
    return {"city": city, "forecast": "sunny", "temperature_c": 21}


class ScriptedLlm(BaseLlm):
    """No network, no state: the reply depends only on the request contents.

    Stateless so concurrent or repeated invocations can never desynchronise a
    script cursor; ADK rebuilds the request from session history each call, so
    "last content holds a function response" means "second call".
    """

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        if any(p.function_response for p in last.parts or ()):
            part = types.Part(text="It is sunny in Paris, 21 C.")
        else:
            # No id: ADK assigns "adk-<uuid4>" itself, as it does for Gemini.
            part = types.Part(
                function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})
            )
        yield LlmResponse(
            content=types.Content(role="model", parts=[part]),
            # A real model reports usage; without it ADK logs a warning per call,
            # which would time stderr writes instead of the runtime.
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=10, candidates_token_count=5, total_token_count=15
            ),
        )


def make_agent() -> LlmAgent:
    return LlmAgent(
        name="weather_agent",
        model=ScriptedLlm(),
        instruction="Answer weather questions with the get_weather tool.",
        tools=[get_weather],
    )


async def one_invocation(runner, i: int) -> list:
    # A fresh session per invocation: ADK's sessions keep the whole history and
    # the request is rebuilt from it, so a reused session would make each
    # invocation slower than the last and the rate would depend on N.
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    msg = types.Content(role="user", parts=[types.Part(text=f"Weather in Paris? #{i}")])
    return [
        e
        async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=msg)
    ]


def describe(events: list) -> list[dict]:
    out = []
    for e in events:
        parts = e.content.parts if e.content and e.content.parts else []
        kinds = [
            "function_call" if p.function_call else "function_response" if p.function_response else "text"
            for p in parts
        ]
        out.append(
            {
                "author": e.author,
                "role": e.content.role if e.content else None,
                "parts": kinds,
                "partial": e.partial,
                "is_final_response": e.is_final_response(),
                "actions": e.actions.model_dump(exclude_defaults=True, exclude_none=True),
            }
        )
    return out


async def main_async(make_runner, store: str) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument(
        "--describe",
        action="store_true",
        help="run one invocation and print the events it yielded and stored, instead of timing",
    )
    args = ap.parse_args()

    runner = make_runner(make_agent())
    try:
        if args.describe:
            events = await one_invocation(runner, 0)
            sessions = await runner.session_service.list_sessions(app_name=APP, user_id=USER)
            stored = await runner.session_service.get_session(
                app_name=APP, user_id=USER, session_id=sessions.sessions[0].id
            )
            print(json.dumps({"yielded": describe(events), "stored": describe(stored.events)}))
            return

        # Warm-up pays for imports, lazy init and (sqlite) table creation.
        for i in range(args.warmup):
            await one_invocation(runner, i)
        t0, cpu0 = time.perf_counter(), time.process_time()
        for i in range(args.n):
            events = await one_invocation(runner, i)
            assert len(events) == 3 and events[-1].is_final_response(), events
        seconds = time.perf_counter() - t0
        cpu_seconds = time.process_time() - cpu0
    finally:
        await runner.close()

    print(
        json.dumps(
            {
                "runtime": "google-adk",
                "store": store,
                "invocations": args.n,
                "seconds": round(seconds, 4),
                "per_second": round(args.n / seconds, 1),
                # On a shared 2-core box the wall rate partly measures waiting for a
                # core; the CPU rate does not (but it also leaves out SQLite's I/O waits).
                "per_cpu_second": round(args.n / cpu_seconds, 1),
            }
        )
    )


def main(make_runner, store: str) -> None:
    asyncio.run(main_async(make_runner, store))
