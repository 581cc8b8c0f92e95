"""A SequentialAgent: a drafter then an editor, each answering once; the drafter's text goes to state."""

from conformance_lib import LlmAgent, SequentialAgent, scripted, text

drafter = LlmAgent(name="drafter", instruction="Draft a one-line note.", output_key="draft",
                   model=scripted(lambda request: text("draft: ship on Friday")))
editor = LlmAgent(name="editor", instruction="Edit the draft.", output_key="final",
                  model=scripted(lambda request: text("final: we ship on Friday.")))
root_agent = SequentialAgent(name="pipeline", sub_agents=[drafter, editor])
