"""The queues: the Celery app, sending run jobs, which jobs a worker starts now (per-app admission and backlog marks), and the enqueue rate limits with their Redis side."""
