"""Transfer and back: the desk hands over to billing, billing answers; on the user's thanks billing hands back to
the desk, which closes."""

from conformance_lib import LlmAgent, calls, said, scripted, text


def lookup_customer(email: str) -> dict:
    """Find a customer by email (declared beside transfer_to_agent: google-adk lists transfer_to_agent first)."""
    return {"email": email, "customer": "C-1"}


def _thanked(request) -> bool:
    return any("Thanks" in message for message in said(request))


def _desk(request):
    return text("Anything else I can do?") if _thanked(request) else calls("transfer_to_agent", agent_name="billing")


def _billing(request):
    return calls("transfer_to_agent", agent_name="front_desk") if _thanked(request) else text("Your invoice is paid.")


billing = LlmAgent(name="billing", description="Answers invoice questions.", instruction="Answer invoices.",
                   model=scripted(_billing))
root_agent = LlmAgent(name="front_desk", instruction="Greet and route.", model=scripted(_desk),
                      tools=[lookup_customer], sub_agents=[billing])
