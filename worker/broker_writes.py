"""Kombu's per-job Redis bookkeeping, written on one connection without waiting for each reply.

For every job, kombu's Redis transport records the message as unacked (a MULTI/EXEC pipeline: ZADD + HSET)
before the task runs, removes it again on ack (ZREM + HDEL), and publishes the worker's task events; each is
a round trip through redis-py's pipeline machinery, together about a third of a worker's Celery-thread time,
and the unacked record sits between a job's arrival and its start. Here the same commands, on the same keys
with the same values (so kombu's visibility-timeout restore works unchanged), go out on one dedicated
connection and their replies are read later, when they have arrived. Order is kept: one connection, one
writer lock. Data written to the socket reaches Redis even if the process is killed right after.

A write that fails falls back to kombu's own code; anything that reads the unacked records back (reject,
restore at shutdown) first waits for every reply, so it never reads ahead of a write still on the way.
"""

from __future__ import annotations

import logging
import threading
from time import time

log = logging.getLogger("agentq.worker")

_installed = False


class _Writer:
    """A redis-py Connection used write-first: send now, drain the replies when they are there."""

    def __init__(self, connection_kwargs: dict):
        import redis

        kwargs = {k: v for k, v in connection_kwargs.items() if k not in ("connection_class", "max_connections")}
        kind = redis.UnixDomainSocketConnection if "path" in kwargs else redis.Connection
        self._connection = kind(**kwargs)
        self._lock = threading.Lock()
        self._outstanding = 0

    def send(self, *commands: tuple) -> None:
        """Write ``commands``; raises redis ConnectionError (the caller falls back) if the socket is gone."""
        with self._lock:
            try:
                self._drain(wait=False)
                self._connection.send_packed_command(self._connection.pack_commands(commands), check_health=False)
                self._outstanding += len(commands)
            except Exception:
                self._reset()
                raise

    def sync(self) -> None:
        """Wait for every reply still owed (before anything reads what was written)."""
        with self._lock:
            try:
                self._drain(wait=True)
            except Exception:
                self._reset()

    def _drain(self, *, wait: bool) -> None:
        while self._outstanding and (wait or self._connection.can_read(timeout=0)):
            self._outstanding -= 1
            try:
                self._connection.read_response()
            except Exception as exc:
                from redis.exceptions import ResponseError

                if not isinstance(exc, ResponseError):
                    raise
                log.warning("broker bookkeeping command failed: %s", exc)

    def _reset(self) -> None:
        self._outstanding = 0
        self._connection.disconnect()


def _writer(channel) -> _Writer:
    """The channel's writer, rebuilt when kombu replaced the channel's connection pool (a reconnect)."""
    pool = channel.pool
    cached = channel.__dict__.get("_agentq_writer")
    if cached is None or cached[0] is not pool:
        cached = channel.__dict__["_agentq_writer"] = (pool, _Writer(pool.connection_kwargs))
    return cached[1]


def install() -> None:
    """Patch kombu's Redis QoS and fanout publishing in this process (idempotent)."""
    global _installed
    if _installed:
        return
    from kombu.transport import redis as kombu_redis
    from kombu.transport import virtual
    from kombu.utils.json import dumps

    qos = kombu_redis.QoS
    append, ack, reject, restore_unacked = qos.append, qos.ack, qos.reject, qos.restore_unacked
    put_fanout = kombu_redis.Channel._put_fanout

    def fast_append(self, message, delivery_tag):
        delivery = message.delivery_info
        record = dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        try:
            _writer(self.channel).send(("ZADD", self.unacked_index_key, time(), delivery_tag),
                                       ("HSET", self.unacked_key, delivery_tag, record))
        except Exception:
            return append(self, message, delivery_tag)
        virtual.QoS.append(self, message, delivery_tag)

    def fast_ack(self, delivery_tag):
        try:
            _writer(self.channel).send(("ZREM", self.unacked_index_key, delivery_tag),
                                       ("HDEL", self.unacked_key, delivery_tag))
        except Exception:
            return ack(self, delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def synced_reject(self, delivery_tag, requeue=False):
        _writer(self.channel).sync()
        return reject(self, delivery_tag, requeue)

    def synced_restore_unacked(self, client=None):
        _writer(self.channel).sync()
        return restore_unacked(self, client)

    def fast_put_fanout(self, exchange, message, routing_key, **kwargs):
        if kwargs.get("_publish_batch") is not None:
            return put_fanout(self, exchange, message, routing_key, **kwargs)
        payload = dumps(message)
        try:
            _writer(self).send(*[("PUBLISH", topic, payload)
                                 for topic in self._get_publish_topics(exchange, routing_key)])
        except Exception:
            return put_fanout(self, exchange, message, routing_key, **kwargs)

    qos.append, qos.ack, qos.reject, qos.restore_unacked = fast_append, fast_ack, synced_reject, synced_restore_unacked
    kombu_redis.Channel._put_fanout = fast_put_fanout
    _installed = True
