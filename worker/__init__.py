"""agentq's distributed half: the Celery app, the invocation lifecycle, leases, failover and the client.

Import the pieces you need (``worker.client.AgentqClient``, ``worker.record.InvocationRecord``); importing
this package alone pulls in nothing heavy.
"""
