"""Sweeper passes, run by every worker's reaper about once a second; whichever worker takes a due entry first acts
on it. Taking pushes the entry's score on by ``HOLD_S`` (``lua/due/claim.lua``); the step then scores it anew or
drops it (``lua/due/drop.lua``), so a worker killed between the two leaves the entry to a later pass.

- Retention: every invocation has an entry in ``keys.retention_due`` (its user's shard on a Cluster, like the
  reaper's sets) from its enqueue on. When it is due the sweeper looks at the record. Not final (queued,
  running, parked): look again one retention period later, so a parked invocation is kept however long it
  waits. Final: once its retention has passed since it finished, the FORGET script removes the record
  together with its status count (``keys.status_counts``: a TTL would drop the record without it) and its
  listing and parked entries, its settled stream and its tool journal (the settle sets no TTL on them); the
  index and audit entries go in the same batch. A record already gone (one that expired by a TTL
  before records stopped having one) leaves the same traces.
- Idle sessions (only with ``RetentionPolicy.session_idle_s``): ``keys.session_expiries`` (its user's shard on
  a Cluster) holds each session's earliest possible expiry, pushed back on every enqueue. When it is due and nothing was committed for the
  TTL and nothing is queued or running, the session is deleted like ``DELETE session`` (its parked
  invocations cancelled, saying why). A worker without a session TTL drops the entries it finds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_DROP, FORGET
from runtime.statuses import FINAL
from worker.config.shards import in_use
from worker.records.codec import dumps
from worker.records.store import Where

log = logging.getLogger("agentq.sweeper")
BATCH = 1000
"""Entries of each kind one pass takes on."""


async def sweep_once(store, shards: list[str] | None = None) -> int:
    """One pass over both sets (the retention set of ``shards``, default every shard in use); the number of
    entries acted on. The reaper passes only the shards that are due on a Cluster (``worker.config.due_shards``)."""
    now_ms = int(time.time() * 1000)
    acted = 0
    if shards is None:
        shards = await in_use(store.redis, cluster=store.clients.is_cluster)
    for shard in shards:
        acted += await sweep_shard(store, shard, now_ms)
    return acted


HOLD_S = 5.0
"""How long an entry a pass took stays with it (``lua/due/claim.lua``): a worker killed between taking an entry
and acting on it leaves it to the next pass after this long (removing it first lost it for good: a record never
swept, an invocation never sent again). The reaper's sets are taken the same way."""


async def _take(store, key: str, now_ms: int) -> list[str]:
    """Due members of ``key`` this pass took (the others are another worker's), each held for ``HOLD_S``."""
    taken = await DUE_CLAIM(store.mux, index=key, now_ms=now_ms, until_ms=now_ms + int(HOLD_S * 1000), limit=BATCH)
    return [member.decode() if isinstance(member, bytes) else member for member in taken]


async def _drop(store, key: str, now_ms: int, members: list[str]) -> None:
    """Drop taken members whose step is done (not those scored anew since, by this pass or anyone)."""
    if members:
        await DUE_DROP(store.mux, index=key, taken_score=now_ms + int(HOLD_S * 1000), members=members)


async def sweep_shard(store, shard: str, now_ms: int) -> int:
    """The due retention and idle-session entries of one shard."""
    return await _sweep_invocations(store, shard, now_ms) + await _sweep_sessions(store, shard, now_ms)


async def _sweep_invocations(store, shard: str, now_ms: int) -> int:
    due = keys.retention_due(shard)
    ids = await _take(store, due, now_ms)
    if not ids:
        return 0
    located = await store.batch(*[("HGET", store.index_key(invocation_id), invocation_id) for invocation_id in ids])
    where = {invocation_id: json.loads(raw) for invocation_id, raw in zip(ids, located, strict=True)
             if isinstance(raw, str)}  # no index entry: swept already
    probes = [("HMGET", keys.invocation(app, user, invocation_id), "status", "finished_at", "updated_at",
               "retention_s") for invocation_id, (app, user, _) in where.items()]
    commands: list[tuple] = []
    forgets: list[tuple[str, str, str]] = []
    for (invocation_id, (app, user, _)), reply in zip(where.items(), await store.batch(*probes), strict=True):
        if isinstance(reply, Exception):
            commands.append(("ZADD", due, now_ms + 1000, invocation_id))  # look again soon
            continue
        status, finished_at, updated_at, retention = reply
        keep_ms = _retention_ms(retention, store.retention.settled_s)
        if status is not None and status not in FINAL:
            commands.append(("ZADD", due, now_ms + keep_ms, invocation_id))
            continue
        if status is not None:
            due_ms = int(_seconds(finished_at or updated_at) * 1000) + keep_ms
            if due_ms > now_ms:
                commands.append(("ZADD", due, due_ms, invocation_id))
                continue
        forgets.append((app, user, invocation_id))
    # pipelined on the mux connection, the script loaded if Redis lost it; one entry's failure (a record of a
    # shape this code does not expect) is that entry's alone: it is looked at again later, the rest go on
    replies = await asyncio.gather(*(_forget(store, app, user, invocation_id) for app, user, invocation_id in forgets),
                                   return_exceptions=True)
    for (app, user, invocation_id), reply in zip(forgets, replies, strict=True):
        if isinstance(reply, BaseException):
            log.error("retention: could not forget invocation %r of %r/%r (looked at again in %gs): %s",
                      invocation_id, app, user, RETRY_FAILED_S, reply)
            commands.append(("ZADD", due, now_ms + int(RETRY_FAILED_S * 1000), invocation_id))
            continue
        # its index and audit entries live outside its user's tag on a Cluster: after the script, in one batch
        commands += [("HDEL", store.index_key(invocation_id), invocation_id),
                     ("ZREM", keys.app_audit(app), dumps([user, invocation_id]))]
    failed = [(command, reply) for command, reply in zip(commands, await store.batch(*commands), strict=True)
              if isinstance(reply, Exception)]
    for command, reply in failed:  # each command is one entry's bookkeeping: the others' stand
        log.error("retention: %s %r failed: %s", command[0], command[1], reply)
    if failed:
        raise failed[0][1]
    # done with: swept now, or before (no index entry); every other one was scored anew above
    forgotten = {invocation_id for _, _, invocation_id in forgets}
    await _drop(store, due, now_ms, [i for i in ids if i not in where or i in forgotten])
    return len(ids)


RETRY_FAILED_S = 60.0
"""How soon an entry whose forget failed is looked at again."""


def _seconds(raw) -> float:
    """A timestamp field as seconds (0 when missing or not a number: an older record's shape)."""
    try:
        return float(raw or 0)
    except ValueError:
        return 0.0


def _retention_ms(raw, default_s: float) -> int:
    """A record's own retention (``retention_s``, absent on older records) in ms, else the policy's."""
    try:
        return int(float(raw or default_s) * 1000)
    except ValueError:
        return int(default_s * 1000)


def _forget(store, app: str, user: str, invocation_id: str):
    """The FORGET script for a final invocation whose retention has passed (or what is left of one already
    gone): its record with its status count, its listing and parked entries and its own keys."""
    shard = store.shard(Where(app=app, user=user, session=""))
    return FORGET(
        store.mux, record=keys.invocation(app, user, invocation_id),
        settled=keys.invocation_settled(app, user, invocation_id),
        journal=keys.invocation_journal(app, user, invocation_id), user_invocations=keys.user_invocations(app, user),
        parked=keys.user_parked(app, user), app_parked=keys.app_parked(app, shard),
        status_counts=keys.status_counts(shard), invocation_id=invocation_id,
        parked_member=dumps([user, invocation_id]))


async def _sweep_sessions(store, shard: str, now_ms: int) -> int:
    expiries = keys.session_expiries(shard)
    members = await _take(store, expiries, now_ms)
    idle_s = store.retention.session_idle_s
    if not members or idle_s is None:
        await _drop(store, expiries, now_ms, members)  # a worker without a session TTL drops them
        return len(members)
    sessions = [json.loads(member) for member in members]
    probes = []
    for app, user, sid in sessions:
        probes += [("HGET", keys.session_meta(app, user, sid), "last_update_time"),
                   ("LLEN", keys.session_queue(app, user, sid))]
    replies = await store.batch(*probes)
    later: list = []
    doomed, done = [], []
    for n, (member, (app, user, sid)) in enumerate(zip(members, sessions, strict=True)):
        last, queued = replies[2 * n], replies[2 * n + 1]
        if last is None:
            done.append(member)  # deleted already
            continue
        if isinstance(last, Exception) or isinstance(queued, Exception) or queued:
            later += [now_ms + int(idle_s * 1000), member]  # busy: it cannot be idle before a TTL from now
            continue
        idle_until = int((float(last) + idle_s) * 1000)
        if idle_until > now_ms:
            later += [idle_until, member]
        else:
            doomed.append((app, user, sid))
            done.append(member)
    if later:  # over the take's score (an enqueue's push-back in between is re-checked early: harmless)
        await store.mux.execute_command("ZADD", expiries, "XX", *later)
    reason = f"session was idle for more than {idle_s:g}s and expired"
    for start in range(0, len(doomed), 100):
        await asyncio.gather(*(store.delete_session(app, user, sid, reason) for app, user, sid in
                               doomed[start : start + 100]))
    if doomed:
        log.info("deleted %d idle session(s)", len(doomed))
    await _drop(store, expiries, now_ms, done)
    return len(members)
