"""One redis-py client per kombu Redis channel instead of one per broker operation.

kombu's Redis channel builds a fresh ``redis.Redis`` for every ack and every event publish
(``Channel.conn_or_acquire``); since redis-py 5 building one sets up its response-callback table, which was about
a sixth of a worker's Celery thread time per run job in bench/worker_bench.py. The cached client uses the same
connection pool (a client object holds no connection of its own), and is rebuilt when kombu replaces the pool
after a reconnect.
"""

from __future__ import annotations

_installed = False


def install() -> None:
    """Patch kombu's Redis channel in this process (idempotent)."""
    global _installed
    if _installed:
        return
    from kombu.transport import redis as kombu_redis

    build = kombu_redis.Channel._create_client

    def _create_client(self, asynchronous=False):
        if asynchronous:
            return build(self, asynchronous=True)
        pool = self.pool
        cached = self.__dict__.get("_agentq_client")
        if cached is None or cached[0] is not pool:
            cached = self.__dict__["_agentq_client"] = (pool, build(self))
        return cached[1]

    kombu_redis.Channel._create_client = _create_client
    _installed = True
