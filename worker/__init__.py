"""agentq's distributed half: invocations as Celery jobs on Redis, run by workers with a long-lived event loop.

- ``client``: ``AgentqClient`` (async) / ``SyncAgentqClient``: enqueue, follow, respond, cancel, wait, list.
- ``record``: the invocation record and its statuses; ``codec``: how it sits in a Redis hash.
- ``store``: records, session FIFO queues, responses, cancel; ``follow``: reading streams and waiting.
- ``scripts``: the Lua scripts (one session hash tag each); ``lease``: session leases, fencing, settling.
- ``executor``: drives claimed invocations through the Runner; ``host``: the per-process loop, heartbeats,
  reaper and graceful drain; ``reaper``: failover and expiry passes; ``journal``: tool idempotency records.
- ``retention``: the retention policy; ``sweeper``: what retention leaves behind, idle sessions;
  ``deletion``: deleting a session; ``listing``: cursor pages of invocations and sessions.
- ``webhooks``: signed notifications of transitions, from the outbox the status scripts fill
  (``webhook_outbox``, ``webhook_config``, ``webhook_signing``).
- ``celery_app`` / ``tasks`` / ``dispatch`` / ``broker`` / ``worker_lifecycle``: the Celery side (thin task,
  run jobs sent with ``send_task``, the broker URL, the worker process around Celery).

Importing this package alone pulls in nothing heavy.
"""
