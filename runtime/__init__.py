"""agentq's in-process ADK runtime: events, sessions, tools, agents, models and the Runner.

Import the submodules (``runtime.runners``, ``runtime.agents`` ...) the way you would import
``google.adk.*``. Importing ``runtime`` itself stays cheap and never pulls in celery, fastapi or redis.
"""

__version__ = "0.1.0"
