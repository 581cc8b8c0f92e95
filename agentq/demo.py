"""``agentq demo``: on a fresh machine, start Redis, a worker and the API, and run the example apps.

Over real HTTP: a small claim is paid at once; a large one parks for a manager's approval, is approved, and
resumes under the same invocation id to completion; a transfer is confirmed and another rejected; the document
pipeline workflow parks on its reviewer, is sent back for changes (it drafts again and parks again), then is
approved and published. Every event is printed as it streams.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable

import httpx

from agentq.local_stack import ROOT, LocalStack
from api.streams.sse_client import SseFrame, describe, read_frames

EXAMPLE_APPS = ["examples.reimbursement:app", "examples.weather:app", "examples.money_transfer:app",
                "examples.doc_pipeline:app"]


async def follow(http: httpx.AsyncClient, invocation_id: str, after: str | None = None,
                 show: Callable[[SseFrame], str] | None = None) -> list[SseFrame]:
    """Print an invocation's frames as they stream; return them once it settles."""
    headers = {"Last-Event-ID": after} if after else {}
    frames = []
    async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
        response.raise_for_status()
        async for frame in read_frames(response):
            print("   ", (show or line)(frame), flush=True)
            frames.append(frame)
    return frames


def line(frame: SseFrame) -> str:
    """One line for a frame (``api.streams.sse_client.describe``), and the API's notice when no worker serves the app."""
    if frame.event == "notice":
        return f"-- notice: {frame.data.get('notice')}"
    return describe(frame)


async def claim(http: httpx.AsyncClient, session_id: str, text: str, app: str = "reimbursement",
                show: Callable[[SseFrame], str] | None = None) -> tuple[str, list[SseFrame]]:
    """Enqueue one request (a reimbursement claim by default) and follow it until it settles."""
    print(f"\n>>> user: {text}", flush=True)
    message = {"role": "user", "parts": [{"text": text}]}
    response = await http.post(f"/apps/{app}/users/demo-user/sessions/{session_id}/invocations",
                               json={"newMessage": message})
    response.raise_for_status()
    invocation_id = response.json()["invocationId"]
    print(f"    enqueued {invocation_id} (202)", flush=True)
    return invocation_id, await follow(http, invocation_id, show=show)


async def drive(base_url: str) -> int:
    """The approval flow over HTTP; returns 0 when every step ended as expected."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
        session = (await http.post("/apps/reimbursement/users/demo-user/sessions")).json()
        print(f"session {session['id']} created", flush=True)

        small_id, frames = await claim(http, session["id"], "Please reimburse $45 for team lunch.")
        small = (await http.get(f"/invocations/{small_id}")).json()
        print(f"    -> {small_id} is {small['status']}", flush=True)

        large_id, frames = await claim(http, session["id"], "Please reimburse $1200 for a conference trip.")
        parked = (await http.get(f"/invocations/{large_id}")).json()
        inbox = (await http.get("/apps/reimbursement/users/demo-user/invocations", params={"status": "parked"})).json()
        print(f"    -> {large_id} is {parked['status']}; approval inbox holds "
              f"{[item['invocationId'] for item in inbox['invocations']]}", flush=True)
        if parked["status"] != "parked" or not parked["pendingCalls"]:
            print("!!! the large claim did not park for approval", flush=True)
            return 1
        pending = parked["pendingCalls"][0]
        print(f"\n>>> manager approves call {pending['id']} ({pending['name']} {pending['args']})", flush=True)
        answer = {"functionResponses": [{"id": pending["id"], "name": pending["name"],
                                         "response": {"status": "approved", "approver": "demo-manager"}}]}
        accepted = await http.post(f"/invocations/{large_id}/function-responses", json=answer)
        print(f"    {accepted.status_code}: {large_id} accepted the response ({accepted.json()['status']})",
              flush=True)
        await follow(http, large_id, after=frames[-1].id)
        final = (await http.get(f"/invocations/{large_id}")).json()
        print(f"    -> {large_id} is {final['status']} (same invocation id, resumed)", flush=True)
        approved = await transfer(http, "Please send $250 to bob.", confirmed=True)
        rejected = await transfer(http, "Please send $5000 to eve.", confirmed=False)
        published = await pipeline(http)
        ok = small["status"] == "completed" and final["status"] == "completed" and approved and rejected and published
        print("\ndemo " + ("finished: small claim paid, large claim approved and paid; a transfer confirmed and "
                           "made, another rejected and never made; a document drafted, sent back for changes, "
                           "redrafted and published" if ok else "FAILED"))
        return 0 if ok else 1


async def transfer(http: httpx.AsyncClient, text: str, *, confirmed: bool) -> bool:
    """A transfer held by ADK's tool confirmation, then approved or rejected; True when it ended as it should."""
    session = (await http.post("/apps/transfers/users/demo-user/sessions")).json()
    invocation_id, frames = await claim(http, session["id"], text, app="transfers")
    parked = (await http.get(f"/invocations/{invocation_id}")).json()
    confirmations = [call for call in parked["pendingCalls"] if call["kind"] == "confirmation"]
    if parked["status"] != "parked" or not confirmations:
        print("!!! the transfer did not wait for a confirmation", flush=True)
        return False
    pending = confirmations[0]
    held = pending["originalCall"]
    print(f"\n>>> a person {'approves' if confirmed else 'rejects'} {held['name']}({held['args']}) "
          f"(hint: {pending['hint']!r})", flush=True)
    answer = {"functionResponses": [{"id": pending["id"], "name": pending["name"],
                                     "response": {"confirmed": confirmed}}]}
    accepted = await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
    print(f"    {accepted.status_code}: {invocation_id} is {accepted.json()['status']}", flush=True)
    frames = await follow(http, invocation_id, after=frames[-1].id)
    final = (await http.get(f"/invocations/{invocation_id}")).json()
    said = [part.get("text") for frame in frames if frame.event == "message"
            for part in (frame.data.get("content") or {}).get("parts", []) if part.get("text")]
    made = bool(said) and said[-1].startswith("Transferred")
    print(f"    -> {invocation_id} is {final['status']}; the transfer was {'made' if made else 'not made'}", flush=True)
    return final["status"] == "completed" and made == confirmed


REVIEWS = [{"decision": "changes", "note": "Mention that it survives a worker crash."}, {"decision": "approve"}]
"""The reviewer's answers in the document pipeline: changes requested once, then an approval."""


async def pipeline(http: httpx.AsyncClient) -> bool:
    """examples.doc_pipeline: parked on its reviewer, answered per REVIEWS; True when it redrafted and published."""
    session = (await http.post("/apps/doc_pipeline/users/demo-user/sessions")).json()
    invocation_id, frames = await claim(http, session["id"], "workflows", app="doc_pipeline", show=node_line)
    drafts = []
    for answer in REVIEWS:
        parked = (await http.get(f"/invocations/{invocation_id}")).json()
        asked = [call for call in parked["pendingCalls"] if call["name"] == "adk_request_input"]
        if parked["status"] != "parked" or not asked:
            print("!!! the pipeline did not wait for its reviewer", flush=True)
            return False
        drafts.append(asked[0]["payload"]["draft"])
        print(f"    -> {invocation_id} is parked on input {asked[0]['id']!r}: {asked[0]['question']}", flush=True)
        print(f"\n>>> reviewer answers {json.dumps(answer)}", flush=True)
        reply = {"functionResponses": [{"id": asked[0]["id"], "name": "adk_request_input", "response": answer}]}
        accepted = await http.post(f"/invocations/{invocation_id}/function-responses", json=reply)
        print(f"    {accepted.status_code}: {invocation_id} is {accepted.json()['status']}", flush=True)
        frames = await follow(http, invocation_id, after=frames[-1].id, show=node_line)
    final = (await http.get(f"/invocations/{invocation_id}")).json()
    state = (await http.get(f"/apps/doc_pipeline/users/demo-user/sessions/{session['id']}")).json()["state"]
    print(f"    -> {invocation_id} is {final['status']} (the same invocation throughout); published: "
          f"{state.get('published')!r}", flush=True)
    if drafts[0] == drafts[-1]:
        print("!!! the second draft is the first one again: the reviewer's note was not applied", flush=True)
        return False
    return final["status"] == "completed" and state.get("published") == drafts[-1]


def node_line(frame: SseFrame) -> str:
    """One line for a workflow frame: the node run's path and its output, question or text."""
    info = frame.data.get("nodeInfo") if frame.event == "message" else None
    if not info:
        return line(frame)
    parts = (frame.data.get("content") or {}).get("parts") or []
    asks = [part["functionCall"]["args"] for part in parts
            if part.get("functionCall", {}).get("name") == "adk_request_input"]
    if asks:
        return f"[{info['path']}] asks: {asks[0].get('message')} payload {json.dumps(asks[0].get('payload'))}"
    if "output" in frame.data:
        return f"[{info['path']}] output {json.dumps(frame.data['output'])}"
    return f"[{info['path']}] {describe(frame).partition('] ')[2]}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agentq demo`` flags."""
    parser.add_argument("--keep", action="store_true", help="keep the demo's data directory and logs (always kept "
                        "when the demo fails)")


def run(args: argparse.Namespace) -> int:
    """Start everything, run the approval flow, stop everything."""
    sys.path.insert(0, str(ROOT))
    import logging

    from examples.model_choice import gemini_configured

    logging.getLogger("httpx").setLevel(logging.WARNING)  # the demo prints its own line per request

    print("agentq demo: human approval flows and a workflow over HTTP (embedded redis-server, one worker, the API)")
    print("model: Gemini (GOOGLE_API_KEY is set)" if gemini_configured()
          else "model: offline ScriptedLlm (set GOOGLE_API_KEY to use Gemini)")
    data_dir = tempfile.mkdtemp(prefix="agentq-demo-")
    stack = LocalStack(data_dir, apps=EXAMPLE_APPS)
    failed = True
    try:
        with stack:
            kept = f"logs in {data_dir}" if args.keep else "logs deleted on exit, --keep keeps them"
            print(f"redis {stack.redis.url}, api {stack.base_url} ({kept})")
            code = asyncio.run(drive(stack.base_url))
            failed = code != 0
            return code
    except Exception as exc:
        print(f"demo failed: {exc}\n--- worker log ---\n{stack.log_tail('worker0')}\n--- api log ---\n"
              f"{stack.log_tail('api')}", file=sys.stderr)
        return 1
    finally:
        if failed:  # the logs are what explains a failure: kept, and said where
            print(f"logs kept in {data_dir}", file=sys.stderr)
        elif not args.keep:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Run ``agentq demo`` directly (``python -m agentq.demo``)."""
    parser = argparse.ArgumentParser(prog="agentq demo", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
