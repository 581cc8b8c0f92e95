"""What google-adk's dev UI asks besides sessions and runs: state updates, /version, app-info, the session
trace view, CORS, and a clear 404 for ADK dev-server features agentq does not serve."""

from __future__ import annotations

import sys

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.deps import Services
from api.settings import parse_cors_origins
from api.views.app_info import describe_app
from runtime import __version__
from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.artifacts import InMemoryArtifactService
from runtime.errors import UsageError
from runtime.models import ScriptedLlm

from .conftest import make_client


def lookup(city: str) -> dict:
    """Look the weather up."""
    return {"city": city}


WEATHER = App(name="weather", root_agent=LlmAgent(
    name="forecaster", description="Says the weather.", instruction="Be brief.", model=ScriptedLlm(turns=["x"]),
    tools=[lookup], sub_agents=[LlmAgent(name="helper", model=ScriptedLlm(turns=["y"]))]))


async def test_patch_commits_the_state_delta_without_running_the_agent_and_survives_a_reload(open_app):
    base = "/apps/weather/users/alice/sessions"
    async with make_client(open_app) as http:
        await http.post(f"{base}/s1", json={"topic": "rain"})
        renamed = await http.patch(f"{base}/s1", json={"stateDelta": {
            "__session_metadata__": {"displayName": "Rainy days"}}})
        reloaded = (await http.get(f"{base}/s1")).json()
        listed = (await http.get(base)).json()
        missing = await http.patch(f"{base}/nope", json={"stateDelta": {"a": 1}})
        bad = await http.patch(f"{base}/s1", json={"state": {"a": 1}})

    assert renamed.status_code == 200, renamed.text
    expected_state = {"topic": "rain", "__session_metadata__": {"displayName": "Rainy days"}}
    assert (renamed.json()["state"], reloaded["state"], listed[0]["state"]) == (expected_state,) * 3
    [event] = reloaded["events"]
    assert (event["author"], event["invocationId"][:2], event["actions"]["stateDelta"]) == (
        "user", "p-", {"__session_metadata__": {"displayName": "Rainy days"}})
    assert (missing.status_code, missing.json()["error"]) == (404, "SessionNotFoundError")
    assert bad.status_code == 422


async def test_version_and_app_info_answer_in_adks_shape(memory_services):
    settings = ApiSettings(app_names=["weather", "bare"], app_infos={"weather": describe_app(WEATHER)})
    async with make_client(create_app(settings, memory_services)) as http:
        version = (await http.get("/version")).json()
        info = (await http.get("/apps/weather/app-info")).json()
        bare = (await http.get("/apps/bare/app-info")).json()
        unknown = await http.get("/apps/other/app-info")
    python = ".".join(map(str, sys.version_info[:3]))
    assert version == {"version": __version__, "language": "python", "language_version": python}
    assert {k: info[k] for k in ("name", "rootAgentName", "description", "language")} == {
        "name": "weather", "rootAgentName": "forecaster", "description": "Says the weather.", "language": "python"}
    assert info["agents"]["forecaster"] == {
        "name": "forecaster", "description": "Says the weather.", "instruction": "Be brief.",
        "tools": [{"functionDeclarations": [{"name": "lookup", "description": "Look the weather up.",
                                             "parameters": {"type": "OBJECT", "required": ["city"],
                                                            "properties": {"city": {"type": "STRING"}}}}]}],
        "subAgents": ["helper"]}
    assert info["agents"]["helper"]["subAgents"] == []
    assert bare == {"name": "bare", "language": "python", "isComputerUse": False}
    assert (unknown.status_code, unknown.json()["error"]) == (404, "AppNotFoundError")


@pytest.mark.parametrize(("method", "path", "feature"), [
    ("GET", "/dev/apps/weather/eval_sets", "evaluations (eval sets, eval runs and their results)"),
    ("POST", "/dev/apps/weather/eval-sets/s/run", "evaluations (eval sets, eval runs and their results)"),
    ("POST", "/dev/apps/weather/builder/save?tmp=true", "the agent builder"),
    ("GET", "/dev/apps/weather/build_graph", "the agent builder's graph (the dev UI draws /dev/apps/{app}/build_graph_image)"),
    ("GET", "/dev/apps/weather/tests", "agent tests"),
    ("GET", "/run_live", "live audio/video runs"),
])
async def test_adk_dev_server_features_agentq_does_not_serve_answer_404_naming_them(open_app, method, path, feature):
    async with make_client(open_app) as http:
        answer = await http.request(method, path)
    assert answer.status_code == 404
    assert (answer.json()["error"], answer.json()["feature"]) == ("FeatureNotServedError", feature)
    assert feature in answer.json()["detail"]


async def test_the_trace_route_answers_the_spans_the_runners_saved_for_the_session(redis_url):
    from runtime.sessions.redis_session_service import RedisSessionService
    from runtime.tracing import RedisSpanStore
    from worker.client import AgentqClient

    sessions, client = RedisSessionService(redis_url), AgentqClient(redis_url)
    spans = RedisSpanStore(redis_url)
    await sessions.create_session(app_name="weather", user_id="alice", session_id="s1")
    span = {"name": "invoke_agent forecaster", "trace_id": "e-1", "span_id": "a", "parent_span_id": None,
            "start_time": 1, "end_time": 2, "attributes": {"gen_ai.conversation.id": "s1"}, "logs": []}
    await spans.save(app_name="weather", user_id="alice", session_id="s1", spans=[span])
    services = Services(session_service=sessions, artifact_service=InMemoryArtifactService(), queue=client)
    keyed = ApiSettings(app_names=["weather"], keys=parse_keys({"bob-key-000002": {"users": ["bob"], "apps": ["*"]}}))
    async with make_client(create_app(ApiSettings(app_names=["weather"]), services)) as http:
        found = (await http.get("/dev/apps/weather/debug/trace/session/s1")).json()
        named = (await http.get("/dev/apps/weather/debug/trace/session/s1", params={"userId": "alice"})).json()
        other = (await http.get("/dev/apps/weather/debug/trace/session/s2")).json()
    async with make_client(create_app(keyed, services), key="bob-key-000002") as http:
        hidden = (await http.get("/dev/apps/weather/debug/trace/session/s1")).json()
        refused = await http.get("/dev/apps/weather/debug/trace/session/s1", params={"userId": "alice"})
    await spans.aclose()
    await client.aclose()
    assert found == named == [span]
    assert (other, hidden, refused.status_code) == ([], [], 404)


async def test_cors_is_off_by_default_and_answers_configured_origins(memory_services):
    preflight = {"Origin": "http://localhost:4200", "Access-Control-Request-Method": "PATCH"}
    async with make_client(create_app(ApiSettings(app_names=["weather"]), memory_services)) as http:
        off = await http.get("/version", headers={"Origin": "http://localhost:4200"})
    on_settings = ApiSettings(app_names=["weather"], cors_origins=["http://localhost:4200"])
    async with make_client(create_app(on_settings, memory_services)) as http:
        allowed = await http.options("/apps/weather/users/u/sessions/s1", headers=preflight)
        other = await http.get("/version", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in off.headers
    assert (allowed.status_code, allowed.headers["access-control-allow-origin"]) == (200, "http://localhost:4200")
    assert "access-control-allow-origin" not in other.headers


def test_cors_origins_setting_is_parsed_and_nonsense_is_refused_naming_it():
    assert parse_cors_origins(" http://a:1, https://b.example/ ,") == ["http://a:1", "https://b.example"]
    assert (parse_cors_origins(""), parse_cors_origins("*")) == ([], ["*"])
    with pytest.raises(UsageError, match="'ftp://x'"):
        parse_cors_origins("ftp://x")
