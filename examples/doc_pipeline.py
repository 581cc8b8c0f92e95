"""A document pipeline as an ADK 2 graph Workflow, with a person reviewing each draft.

    fetch -> draft -> review -> decide -+- "approve" -> publish
               ^                        +- "changes" -> revise -> draft   (loops back with the reviewer's note)
               |________________________+- "reject"  -> rejected
                                        +- anything else -> review        (asks again)

``fetch`` turns the topic (the user's message) into source notes; ``draft`` is an LlmAgent that writes from
them; ``review`` yields a ``RequestInput``, which parks the invocation on an ``adk_request_input`` call until a
reviewer answers ``{"decision": "approve" | "changes" | "reject", "note": "..."}`` (its id is ``review``);
the answer is ``review``'s output and ``decide`` routes on it. On agentq's workers every finished node is a
checkpoint: the resumed invocation does not fetch or draft again, it goes on from the answer.

Run a worker with ``agentq worker --app examples.doc_pipeline:app``; enqueue a topic such as ``workflows``.
"""

from __future__ import annotations

import re

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.events import Event, RequestInput
from runtime.models import LlmRequest
from runtime.workflow import DEFAULT_ROUTE, START, Workflow

from .model_choice import pick_model

SOURCES = {
    "workflows": "agentq now runs ADK 2 graph workflows. Each finished node is a checkpoint, so a workflow "
                 "survives a worker crash. A node can ask a person for input and park without holding a worker.",
}
"""Stand-in for a document store: notes by topic."""

REVIEW_SCHEMA = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": ["approve", "changes", "reject"]},
                   "note": {"type": "string"}},
    "required": ["decision"],
}
"""What the reviewer answers."""


def fetch(node_input: str) -> Event:
    """The source notes on the topic (kept in state for the revisions)."""
    topic = node_input.strip()
    source = SOURCES.get(topic.lower(), f"There are no notes on {topic} yet.")
    return Event(output=f"Notes on {topic}: {source}", state={"topic": topic, "source": source})


def scripted_writer(request: LlmRequest) -> str:
    """The offline model: the first sentence of the notes as a draft; a revision appends the reviewer's note."""
    text = " ".join(part.text or "" for part in request.contents[-1].parts or [])
    revision = re.search(r"Reviewer's note: (.*)\nDraft: (.*)", text, re.S)
    if revision:
        return f"{revision.group(2).strip()} (Revised: {revision.group(1).strip()})"
    topic, _, notes = text.partition(": ")
    return f"{topic.removeprefix('Notes on ').capitalize()}: {notes.split('. ')[0].rstrip('.')}."


draft = LlmAgent(
    name="draft",
    model=pick_model(scripted_writer),
    instruction=("Write a one-paragraph announcement from the notes you are given. When you are given a draft and "
                 "a reviewer's note, rewrite the draft as the note asks. Answer with the text only."),
    output_key="draft",  # state["draft"]: the latest draft, for review, revise and publish
)


async def review(topic: str, draft: str):
    """Ask a reviewer (``topic`` and ``draft`` come from session state)."""
    yield RequestInput(interrupt_id="review", message=f"Publish this draft about {topic}?",
                       payload={"topic": topic, "draft": draft}, response_schema=REVIEW_SCHEMA)


def decide(node_input: dict) -> Event:
    """Route on the reviewer's decision."""
    return Event(output=node_input, route=node_input.get("decision"))


def revise(node_input: dict, draft: str) -> str:
    """The next input of ``draft``: the current draft and what the reviewer asked for."""
    return f"Reviewer's note: {node_input.get('note') or 'improve it'}\nDraft: {draft}"


def publish(draft: str) -> Event:
    return Event(output={"status": "published", "text": draft}, state={"published": draft})


def rejected(node_input: dict) -> dict:
    return {"status": "rejected", "note": node_input.get("note", "")}


root_agent = Workflow(name="doc_pipeline", edges=[
    (START, fetch, draft, review, decide),
    (decide, {"approve": publish, "changes": revise, "reject": rejected, DEFAULT_ROUTE: review}),
    (revise, draft),
])

app = App(name="doc_pipeline", root_agent=root_agent)
