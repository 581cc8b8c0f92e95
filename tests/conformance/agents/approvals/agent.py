"""A long-running tool: the call parks the run; a function response from the client resumes it."""

from conformance_lib import LlmAgent, LongRunningFunctionTool, answers, calls, scripted, text


def ask_manager(amount: int) -> dict:
    """Ask a manager to approve an expense; the answer comes later."""
    return {"status": "pending", "amount": amount}


def _reply(request):
    done = answers(request, "ask_manager")
    if not done:
        return calls("ask_manager", amount=300)
    if done[-1].get("status") == "pending":
        return text("Your request is waiting for the manager.")
    return text("The manager approved." if done[-1].get("approved") else "The manager declined.")


root_agent = LlmAgent(name="approvals", model=scripted(_reply), instruction="File expense approvals.",
                      tools=[LongRunningFunctionTool(func=ask_manager)])
