"""An agent transfer: the router hands the conversation to its billing sub-agent, which answers."""

from conformance_lib import LlmAgent, calls, scripted, text


def _route(request):
    return calls("transfer_to_agent", agent_name="billing")


def _bill(request):
    return text("Billing here: your last invoice is paid.")


billing = LlmAgent(name="billing", model=scripted(_bill), description="Answers invoice questions.",
                   instruction="Answer invoice questions.")
root_agent = LlmAgent(name="router", model=scripted(_route), instruction="Send each question to the right agent.",
                      sub_agents=[billing])
