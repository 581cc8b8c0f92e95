"""An ADK 2 graph workflow with a fan-out and a join, then a RequestInput answered by the client."""

from conformance_lib import START, Event, JoinNode, RequestInput, Workflow, node


@node
def split(node_input: str):
    return node_input


@node
def costs(node_input: str):
    return {"costs": f"costs of {node_input}"}


@node
def risks(node_input: str):
    return {"risks": f"risks of {node_input}"}


@node
def approve(node_input: dict):
    yield RequestInput(interrupt_id="approve-plan", message="Approve the plan?", payload=node_input)


@node
def record(node_input):
    yield Event(output={"approved": node_input}, state={"recorded": True})


join = JoinNode(name="both")
root_agent = Workflow(name="join_flow", edges=[(START, split, (costs, risks), join, approve, record)])
