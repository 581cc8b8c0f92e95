"""The ``agentq`` command line: workers, the API, the demo, and terminal commands for invocations."""
