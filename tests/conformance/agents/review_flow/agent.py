"""An ADK 2 graph workflow: a function node, an agent node, a RequestInput answered by the client, a last node."""

from conformance_lib import START, Event, LlmAgent, RequestInput, Workflow, node, scripted, text


@node
def outline(node_input: str):
    return f"Outline of: {node_input}"


writer = LlmAgent(name="writer", model=scripted(lambda request: text("A short draft about launch day.")),
                  instruction="Write a draft from the outline.")


@node
def review(node_input: str):
    yield RequestInput(interrupt_id="approve-draft", message="Approve the draft?", payload={"draft": node_input})


@node
def publish(node_input):
    yield Event(output=f"published after review: {node_input}", state={"published": True})


root_agent = Workflow(name="review_flow", edges=[(START, outline, writer, review, publish)])
