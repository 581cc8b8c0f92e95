"""OpenTelemetry: one trace id follows an approval from the client's enqueue, through the park and the answer, to
the run that resumes it on another worker; real ``agentq api`` and ``agentq worker`` processes export to a real
OTLP/HTTP receiver (tests/otlp_receiver.py). And no exporter exists where no endpoint is set."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections import Counter

import httpx

from agentq.local_stack import LocalStack
from tests.otlp_receiver import OtlpReceiver, ReceivedSpan

APP = "examples.reimbursement:app"
OTEL_OFF = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED",
            "OTEL_SERVICE_NAME")


ENQUEUE_ROUTE = "POST /apps/{app_name}/users/{user_id}/sessions/{session_id}/invocations"
ANSWER_ROUTE = "POST /invocations/{invocation_id}/function-responses"


def _names(spans: list[ReceivedSpan], trace_id: str):
    """How many spans of each name ``trace_id`` has, as (name, count) pairs."""
    return Counter(span.name for span in spans if span.trace_id == trace_id).items()


def _traceparent(trace_id: str) -> tuple[str, str]:
    """A client's sampled span in ``trace_id``: its ``traceparent`` header and its span id."""
    span_id = secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", span_id


def _wait_status(http: httpx.Client, invocation_id: str, wanted: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        record = http.get(f"/invocations/{invocation_id}").json()
        if record["status"] == wanted:
            return record
        assert time.monotonic() < deadline and record["status"] in ("queued", "running", "parked"), record
        time.sleep(0.05)


def _one(spans: list[ReceivedSpan], name: str, **attributes) -> ReceivedSpan:
    found = [s for s in spans if s.name == name and all(s.attributes.get(k) == v for k, v in attributes.items())]
    assert len(found) == 1, (name, attributes, [(s.name, s.attributes) for s in spans])
    return found[0]


def _ancestors(spans: list[ReceivedSpan], span: ReceivedSpan) -> list[str]:
    """The names of ``span``'s ancestors, nearest first, up to the first one not received (the client's)."""
    by_id = {s.span_id: s for s in spans}
    names = []
    while span.parent_span_id in by_id:
        span = by_id[span.parent_span_id]
        names.append(span.name)
    return names


def _under(spans: list[ReceivedSpan], root: ReceivedSpan) -> set[str]:
    """The names of the spans below ``root``."""
    below, names = {root.span_id}, set()
    for _ in spans:  # parents come out in any order: widen until nothing changes
        for span in spans:
            if span.parent_span_id in below and span.span_id not in below:
                below.add(span.span_id)
                names.add(span.name)
    return names


def test_one_trace_id_follows_an_approval_from_the_enqueue_across_the_park_to_the_resumed_run_on_another_worker(
        tmp_path):
    trace_id = secrets.token_hex(16)
    enqueue_header, enqueue_parent = _traceparent(trace_id)
    answer_header, answer_parent = _traceparent(trace_id)
    with OtlpReceiver() as receiver:
        env = {name: "" for name in OTEL_OFF} | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50",
            "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}
        with LocalStack(tmp_path, apps=[APP], extra_env=env) as stack, httpx.Client(base_url=stack.base_url,
                                                                                     timeout=30) as http:
            assert http.post("/apps/reimbursement/users/alice/sessions", json={"sessionId": "s1"}).status_code == 200
            enqueued = http.post("/apps/reimbursement/users/alice/sessions/s1/invocations",
                                 headers={"traceparent": enqueue_header},
                                 json={"newMessage": {"role": "user", "parts": [{"text": "Reimburse $1200 for a trip."}]}})
            invocation_id = enqueued.json()["invocationId"]
            call = _wait_status(http, invocation_id, "parked")["pendingCalls"][0]
            stack.stop_process(stack.workers[0])  # the first worker leaves; the answer is run by a second one
            stack.start_worker()
            answered = http.post(f"/invocations/{invocation_id}/function-responses",
                                 headers={"traceparent": answer_header},
                                 json={"functionResponses": [{"id": call["id"], "name": call["name"],
                                                              "response": {"status": "approved"}}]})
            _wait_status(http, invocation_id, "completed")
            spans = receiver.wait_for(lambda got: _names(got, trace_id) >= {
                "execute_tool reimburse": 1, "invocation": 2, ENQUEUE_ROUTE: 1, ANSWER_ROUTE: 1,
                "fastapi.endpoint": 2}.items())
    assert (enqueued.status_code, answered.status_code) == (202, 202)
    traced = [span for span in spans if span.trace_id == trace_id]
    enqueue = _one(traced, ENQUEUE_ROUTE)
    answer = _one(traced, ANSWER_ROUTE)
    first = _one(traced, "invocation", **{"agentq.resumed": False})
    resumed = _one(traced, "invocation", **{"agentq.resumed": True})
    # the API's request spans are children of the client's spans; the runs descend from the enqueue request
    assert (enqueue.service, enqueue.parent_span_id, enqueue.attributes["http.response.status_code"]) == (
        "agentq-api", enqueue_parent, 202)
    assert (answer.service, answer.parent_span_id) == ("agentq-api", answer_parent)
    assert (first.service, resumed.service) == ("agentq-worker", "agentq-worker")
    # (FastAPI's own telemetry opens the request span and, under it, the endpoint's span that enqueues)
    assert _ancestors(traced, first) == _ancestors(traced, resumed) == ["fastapi.endpoint", enqueue.name]
    assert first.attributes["gcp.vertex.agent.invocation_id"] == resumed.attributes[
        "gcp.vertex.agent.invocation_id"] == invocation_id
    assert first.attributes["agentq.worker"] != resumed.attributes["agentq.worker"]
    # the park, and the resumed run's links to the parked run and to the answer
    assert (first.attributes["agentq.invocation.status"], first.events) == ("parked", [
        ("parked", {"agentq.pending_call_ids": [call["id"]], "agentq.pending_call_names": ["ask_for_approval"]})])
    assert resumed.attributes["agentq.invocation.status"] == "completed"
    links = {attributes["agentq.link"]: (linked_trace, span_id) for linked_trace, span_id, attributes in resumed.links}
    assert links.keys() == {"parked run", "answer"}
    assert links["parked run"] == (trace_id, first.span_id)
    answer_link = next(span for span in traced if span.span_id == links["answer"][1])
    assert [answer_link.name, *_ancestors(traced, answer_link)] == ["fastapi.endpoint", answer.name]
    # the agent, model and tool spans of each run sit under it, with google-adk's GenAI attributes
    assert _under(traced, first) == {"invoke_agent reimbursement_agent", "call_llm", "execute_tool ask_for_approval"}
    assert _under(traced, resumed) == {"invoke_agent reimbursement_agent", "call_llm", "execute_tool reimburse"}
    tool = _one(traced, "execute_tool reimburse")
    assert {key: tool.attributes[key] for key in ("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type",
                                                  "gen_ai.agent.name", "gcp.vertex.agent.tool_call_args")} == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "reimburse", "gen_ai.tool.type": "FunctionTool",
        "gen_ai.agent.name": "reimbursement_agent",
        "gcp.vertex.agent.tool_call_args": '{"purpose":"a trip","amount":1200.0}'}
    agent = next(s for s in traced if s.name == "invoke_agent reimbursement_agent" and s.parent_span_id == first.span_id)
    assert {key: agent.attributes[key] for key in ("gen_ai.operation.name", "gen_ai.agent.name",
                                                   "gen_ai.conversation.id")} == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reimbursement_agent",
        "gen_ai.conversation.id": "s1"}
    llm = next(s for s in traced if s.name == "call_llm")
    assert (llm.attributes["gen_ai.system"], llm.attributes["gcp.vertex.agent.invocation_id"]) == (
        "gcp.vertex.agent", invocation_id)


def _setup_in_a_fresh_process(**env: str) -> dict:
    """What ``configure_from_env`` did in a new Python process with ``env`` (and no other OTEL_* setting)."""
    script = (
        "import json, sys\n"
        "from opentelemetry import trace\n"
        "from runtime.tracing import otel, otel_setup\n"
        "exporting = otel_setup.configure_from_env('agentq-worker')\n"
        "print(json.dumps({'exporting': exporting, 'enabled': otel.enabled(),\n"
        "    'provider': type(trace.get_tracer_provider()).__name__,\n"
        "    'exporter_imported': 'opentelemetry.exporter.otlp.proto.http.trace_exporter' in sys.modules}))\n")
    clean = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", script], env={**clean, **env}, capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_an_otel_endpoint_no_exporter_is_created_and_no_provider_installed():
    off = {"exporting": False, "enabled": False, "provider": "ProxyTracerProvider", "exporter_imported": False}
    assert _setup_in_a_fresh_process() == off
    assert _setup_in_a_fresh_process(OTEL_SERVICE_NAME="billing") == off
    assert _setup_in_a_fresh_process(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
                                     OTEL_SDK_DISABLED="true") == off
    assert _setup_in_a_fresh_process(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:9/v1/traces") == {
        "exporting": True, "enabled": True, "provider": "TracerProvider", "exporter_imported": True}
