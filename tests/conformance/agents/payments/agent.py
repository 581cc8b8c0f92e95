"""A tool held for the user's confirmation (``require_confirmation``): the ``adk_request_confirmation`` call."""

from conformance_lib import FunctionTool, LlmAgent, answers, calls, scripted, text


def send_money(amount: int, to: str) -> dict:
    """Send money to someone."""
    return {"sent": amount, "to": to}


def _reply(request):
    done = answers(request, "send_money")
    if not done:
        return calls("send_money", amount=50, to="Ana")
    if "sent" in done[-1]:
        return text(f"Sent {done[-1]['sent']} to {done[-1]['to']}.")
    return text("The payment was not confirmed.")


root_agent = LlmAgent(name="payments", model=scripted(_reply), instruction="Make payments.",
                      tools=[FunctionTool(send_money, require_confirmation=True)])
