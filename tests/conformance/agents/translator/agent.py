"""An AgentTool: the root agent calls a wrapped translator agent as a tool and answers from its result."""

from conformance_lib import AgentTool, LlmAgent, answers, calls, scripted, text

french = LlmAgent(name="french", description="Translates English text into French.",
                  instruction="Translate the text into French.",
                  model=scripted(lambda request: text("Bonjour le monde")))


def _reply(request):
    done = answers(request, "french")
    if not done:
        return calls("french", request="Hello world")
    return text(f"In French: {done[-1].get('result')}")


root_agent = LlmAgent(name="translator", model=scripted(_reply), instruction="Translate with your tool.",
                      tools=[AgentTool(french)])
