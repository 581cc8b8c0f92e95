"""Redis-backed storage shared by the session service, artifact service, workers and API.

Nothing under ``runtime`` imports this package unless a Redis-backed service is asked for, so
``import runtime`` stays free of redis.
"""
