"""A LoopAgent: a writer and a critic take turns; the critic ends the loop with exit_loop in the second round."""

from conformance_lib import LlmAgent, LoopAgent, answers, calls, exit_loop, scripted, text


def _write(request):
    rounds = sum(1 for content in request.contents if content.role == "model")
    return text(f"version {rounds + 1}")


def _critique(request):
    if answers(request, "exit_loop"):
        return text("Good enough.")
    versions = [p.text for c in request.contents for p in c.parts or () if p.text and "version" in p.text]
    return calls("exit_loop") if any("version 2" in v for v in versions) else text("Make it shorter.")


writer = LlmAgent(name="writer", instruction="Write a version.", model=scripted(_write))
critic = LlmAgent(name="critic", instruction="Criticise the version; call exit_loop when it is good.",
                  model=scripted(_critique), tools=[exit_loop])
root_agent = LoopAgent(name="refiner", sub_agents=[writer, critic], max_iterations=3)
