from . import agent  # noqa: F401  (adk api_server loads <agent>.agent.root_agent)
