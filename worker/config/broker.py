"""Which broker carries the run jobs: ``AGENTQ_BROKER_URL``, or the store's own Redis when it is not set.

The broker may be a different Redis from the store (or the same one): run jobs are plain Celery messages, and
the dispatch watchdog lives in the store, so nothing ties the two together. A Sentinel URL, in the store's
syntax (``sentinel://h1:26379;sentinel://h2:26379/0?master=mymaster``, see ``runtime.redis_store.redis_url``),
becomes kombu's own ``sentinel://`` transport with the master's name as its ``master_name`` transport option, and
socket timeouts (see ``sentinel_transport_options``).
A Redis Cluster cannot be the broker (kombu's Redis transport moves messages between keys in different slots):
a store on a Cluster needs ``AGENTQ_BROKER_URL`` naming a plain Redis or a Sentinel group.
"""

from __future__ import annotations

import os
from urllib.parse import quote

from runtime.errors import UsageError
from runtime.redis_store.redis_url import SENTINEL_SOCKET_TIMEOUT_S, is_cluster, is_sentinel, parse_store_url

BROKER_URL_ENV = "AGENTQ_BROKER_URL"
BROKER_SOCKET_TIMEOUT_S = 5.0
"""How long a broker command (a publish, a consumer's read) may wait for a reply before the connection counts
as dead; kombu's consumer blocks on reads of 1 s at most, so a live broker always answers sooner."""


def broker_url(store_url: str, environ: dict[str, str] | None = None) -> str:
    """The broker URL: ``AGENTQ_BROKER_URL`` if set, else ``store_url``."""
    env = os.environ if environ is None else environ
    return env.get(BROKER_URL_ENV) or store_url


def kombu_broker(url: str, environ: dict[str, str] | None = None) -> tuple[str, dict]:
    """``(kombu URL, transport options)`` for a broker URL; UsageError naming what is wrong in a Sentinel URL, or
    for a Cluster URL."""
    if is_cluster(url):
        raise UsageError(f"the Celery broker cannot be the Redis Cluster {url!r} (kombu's commands cross hash "
                         f"slots): set {BROKER_URL_ENV} to a plain redis:// or sentinel:// URL")
    if not is_sentinel(url):
        return url, {}
    parsed = parse_store_url(url, environ)
    auth = ""
    if parsed.username or parsed.password:
        auth = f"{quote(parsed.username or '', safe='')}:{quote(parsed.password or '', safe='')}@"
    # kombu reads every sentinel from the ';'-separated URL and the master's name from its transport options
    hosts = ";".join(f"sentinel://{auth}{host}:{port}/{parsed.db}" for host, port in parsed.sentinels)
    return hosts, sentinel_transport_options(parsed.master)


def sentinel_transport_options(master: str) -> dict:
    """kombu's transport options for a broker behind Sentinel.

    A failover is when a master can vanish without closing its connections (a dead machine, a partition): without
    timeouts a publish, which runs on a worker's event loop, would wait for its reply forever and stall every
    invocation of the process, and a sentinel that stopped answering would hold up finding the new master."""
    return {"master_name": master, "sentinel_kwargs": {"socket_timeout": SENTINEL_SOCKET_TIMEOUT_S},
            "socket_timeout": BROKER_SOCKET_TIMEOUT_S, "socket_connect_timeout": BROKER_SOCKET_TIMEOUT_S}
