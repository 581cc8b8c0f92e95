"""Keys of the enqueue rate limits and in-flight quotas (api.access.rate_limits).

All of them share the hash tag ``{rate}``: one script checks a principal's and an app/user's limits together,
so on Redis Cluster they live in one slot (a few small keys per active caller).
"""

from __future__ import annotations

from ._naming import PREFIX, _part

TAG = "{rate}"


def rate_bucket(subject: str) -> str:
    """Hash: ``tokens`` and ``at`` (ms) of one subject's token bucket; expires once it would be full again.
    ``subject``: ``p:<principal id>`` or ``u:<app>/<user>``."""
    return f"{PREFIX}{TAG}:bucket:{_part(subject)}"


def rate_inflight(subject: str) -> str:
    """Sorted set: the subject's invocation ids still in flight (and ``r:`` reservations), scored by ms taken."""
    return f"{PREFIX}{TAG}:inflight:{_part(subject)}"
