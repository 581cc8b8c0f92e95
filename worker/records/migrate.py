"""Layout migrations: a store written by an older release brought to ``runtime.redis_store.layout.LAYOUT_VERSION``.

Online: each record is brought forward by one script (``lua/layout/migrate_record.lua``) beside the live
transitions, which count a record the migration has not reached yet themselves (the ``counted`` marker), so
approvals keep waiting and stay answerable while it runs and no count is taken twice. Idempotent (each step is
an NX write or a marker) and resumable: the SCAN cursor is kept in ``keys.layout`` after every batch (one node),
and a run that was stopped goes on from it; the version is written last.

Every process calls ``require_layout`` at start: a store newer than the code is refused naming both versions;
an older one is migrated under a lock (``AGENTQ_MIGRATE_AT_START=off``: refused instead, telling the operator to
run ``agentq migrate``), the other processes that start meanwhile wait for it. Workers of an older release still
alive on the store (their announcement carries no layout) make a new process refuse to start: the previous
release's scripts neither keep the counts nor the app-wide parked index (see the README's deployment section).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from runtime.redis_store import keys
from runtime.redis_store.layout import (
    LAYOUT_VERSION,
    LayoutError,
    layout_key,
    migration_lock,
    read_version,
    too_new,
)
from runtime.redis_store.scripts import FLOW_COUNTS, MIGRATE_RECORD
from runtime.redis_store.slots import key_slot, shard_of, slot_tag
from worker.fleet.workers_alive import ALIVE_S
from worker.records.codec import dumps

log = logging.getLogger("agentq.migrate")

MIGRATE_AT_START_ENV = "AGENTQ_MIGRATE_AT_START"
"""``off`` (or ``0``, ``false``, ``no``): a process never migrates at start; it refuses an older store."""
SCAN_COUNT = 1000
"""Keys asked of each SCAN step (each step's records are migrated in one pipeline)."""
LOCK_MS = 30_000
"""The migration lock's TTL, renewed after every batch: a migrator that died frees it this long after."""
WAIT_S = 600.0
"""How long a starting process waits for another one's migration before it gives up."""
_RECORD_MATCH = "agentq:{*}:i:*"
"""Every invocation record key (and its journal and settled stream, left out by ``_is_record``)."""


@dataclass
class MigrationReport:
    """What one migration did (``lines`` prints it)."""

    from_version: int
    to_version: int = LAYOUT_VERSION
    records: int = 0
    counted: int = 0
    flows: int = 0
    indexed: int = 0
    persisted: int = 0
    due: int = 0
    requeued: int = 0
    vanished: int = 0
    moved: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    resumed: bool = False

    def per_100k_s(self) -> float | None:
        """Seconds per 100,000 records at this run's pace (None without records)."""
        return self.seconds / self.records * 100_000 if self.records else None

    def lines(self) -> list[str]:
        """The report, one fact a line."""
        out = [f"layout {self.from_version} -> {self.to_version}" + (" (resumed)" if self.resumed else ""),
               f"  {self.records} invocation record(s) looked at, {self.vanished} gone meanwhile",
               f"  {self.counted} counted in the status counts (the others were counted already)",
               f"  {self.flows} per-status counter(s) turned into flows",
               f"  {self.indexed} parked one(s) added to the app-wide parked index",
               f"  {self.persisted} TTL(s) taken off and handed to retention",
               f"  {self.due} retention entr(y/ies) added",
               f"  {self.requeued} running one(s) no worker held sent to run again"]
        out += [f"  {count} entr(y/ies) of {name!r} moved to their shards" for name, count in self.moved.items()]
        pace = self.per_100k_s()
        out.append(f"  {self.seconds:.2f}s" + (f", {pace:.1f}s per 100,000 invocations" if pace is not None else ""))
        return out


def migrate_at_start(environ: dict[str, str] | None = None) -> bool:
    """Whether a starting process may migrate the store itself (``AGENTQ_MIGRATE_AT_START``, on by default)."""
    raw = (os.environ if environ is None else environ).get(MIGRATE_AT_START_ENV, "on").strip().lower()
    if raw in ("", "on", "1", "true", "yes"):
        return True
    if raw in ("off", "0", "false", "no"):
        return False
    raise LayoutError(f"{MIGRATE_AT_START_ENV} must be on or off, got {raw!r}")


def stored_version(client) -> int:
    """The store's layout version (0: none written, an older release's store or an empty one)."""
    return read_version(client.hget(layout_key(), "version"))


def older_workers(client, *, now: float | None = None) -> list[str]:
    """Workers alive on the store (a beat within ``ALIVE_S``) that announced themselves without this layout:
    an older release's (``worker.running.worker_lifecycle`` announces ``layout``)."""
    since_ms = int(((time.time() if now is None else now) - ALIVE_S) * 1000)
    shards = [""] if not _is_cluster(client) else [f"w:{n}" for n in range(16)]
    names = [_text(name) for shard in shards
             for name in client.zrangebyscore(keys.workers_alive(shard), since_ms, "+inf")]
    if not names:
        return []
    older = []
    for name, info in zip(names, client.hmget(keys.workers(), names), strict=True):
        if info is None:
            continue  # beating but not announced yet: a new worker on its way up, or nothing we can tell
        try:
            layout = json.loads(info).get("layout", 0)
        except (ValueError, AttributeError):
            layout = 0
        if layout != LAYOUT_VERSION:
            older.append(f"{name} (layout {layout})")
    return sorted(older)


def require_layout(url: str, *, who: str, retention_s: float, migrate: bool | None = None,
                   out: Callable[[str], None] | None = None, wait_s: float = WAIT_S) -> None:
    """Check the store at ``url`` before ``who`` (a process: 'agentq worker', 'agentq api', ...) starts on it.

    Refuses (LayoutError, naming both versions) a store newer than this code, or workers of another layout alive
    on it; migrates an older one (``migrate``: default from ``AGENTQ_MIGRATE_AT_START``) under the lock, or waits
    for the process that holds it."""
    from runtime.redis_store.redis_url import redis_client_from_url

    client = redis_client_from_url(url, asyncio=False, decode_responses=True)
    try:
        version = stored_version(client)
        if version > LAYOUT_VERSION:
            raise too_new(version)
        older = older_workers(client)
        if older:
            raise LayoutError(
                f"worker(s) of another release are alive on this store: {', '.join(older)}; this code is "
                f"layout {LAYOUT_VERSION} and does not run beside them: stop them first (docs/upgrading.md)")
        if version == LAYOUT_VERSION:
            return
        if not (migrate_at_start() if migrate is None else migrate):
            raise LayoutError(
                f"the store's data layout is version {version}, older than this code's {LAYOUT_VERSION}, "
                f"and {MIGRATE_AT_START_ENV}=off: run `agentq migrate` first")
        report = migrate_store(client, retention_s=retention_s, owner=f"{who} {socket.gethostname()}:{os.getpid()}",
                               wait_s=wait_s)
        if report is not None and (report.records or report.moved):
            for line in report.lines():
                (out or log.info)(line)
        elif report is not None:  # a new, empty store: only stamped with this layout, nothing to tell
            log.debug("store stamped with layout %s", LAYOUT_VERSION)
    finally:
        client.close()


def migrate_store(client, *, retention_s: float, owner: str, wait_s: float = WAIT_S,
                  on_batch: Callable[[MigrationReport], None] | None = None) -> MigrationReport | None:
    """Bring the store of ``client`` (a sync redis-py client, decoded replies) to ``LAYOUT_VERSION`` under the
    lock; the report, or None when another process did it meanwhile (this one waited for it)."""
    deadline = time.monotonic() + wait_s
    while True:
        version = stored_version(client)
        if version > LAYOUT_VERSION:
            raise too_new(version)
        if version == LAYOUT_VERSION:
            return None
        if client.set(migration_lock(), owner, nx=True, px=LOCK_MS):
            break
        holder = client.get(migration_lock())
        if time.monotonic() > deadline:
            raise LayoutError(f"the store is being migrated by {holder!r} for more than {wait_s:g}s; "
                              "start again once it is done")
        log.info("waiting for the migration of the store by %r", holder)
        time.sleep(0.5)
    try:
        report = _migrate(client, version, retention_ms=int(retention_s * 1000), owner=owner, on_batch=on_batch)
        client.hset(layout_key(), mapping={"version": LAYOUT_VERSION, "migrated_at": repr(time.time()),
                                           "migrated_by": owner})
        client.hdel(layout_key(), "cursor")
        return report
    finally:
        if client.get(migration_lock()) == owner:
            client.delete(migration_lock())


def _migrate(client, version: int, *, retention_ms: int, owner: str,
             on_batch: Callable[[MigrationReport], None] | None) -> MigrationReport:
    cluster = _is_cluster(client)
    report = MigrationReport(from_version=version)
    started = time.monotonic()
    cursor = 0 if cluster else int(client.hget(layout_key(), "cursor") or 0)
    report.resumed = cursor != 0
    if not cluster:
        client.script_load(MIGRATE_RECORD.source)
    # first, so that the records' migration and the live transitions meanwhile count in flows on top of them
    report.flows = _counters_to_flows(client, cluster)
    for batch in _record_batches(client, cursor, cluster):
        next_cursor, record_keys = batch
        _migrate_records(client, record_keys, report, retention_ms=retention_ms, cluster=cluster)
        if not cluster:
            client.hset(layout_key(), "cursor", next_cursor)  # where a stopped run goes on from
        if client.set(migration_lock(), owner, xx=True, px=LOCK_MS, get=True) != owner:
            raise LayoutError(f"lost the migration lock {migration_lock()!r} (another process took it "
                              f"after this one stalled for over {LOCK_MS} ms); the migration goes on there")
        if on_batch:
            on_batch(report)
    if cluster:
        _move_to_shards(client, report)
    report.seconds = time.monotonic() - started
    return report


def _counters_to_flows(client, cluster: bool) -> int:
    """Layout 1's per-status counters of every shard's status counts turned into flows
    (``lua/layout/flow_counts.lua``, a batch of fields a call); how many. Nothing writes such a counter any more
    (workers of an older layout are refused), so one HSCAN pass meets each one."""
    shards = sorted(client.smembers(keys.shards())) if cluster else [""]
    converted = 0
    for shard in shards:
        key = keys.status_counts(shard)
        batch: list[str] = []
        for found, _ in client.hscan_iter(key, count=SCAN_COUNT):
            if ">" not in found and not found.startswith("!"):
                batch.append(found)
            if len(batch) >= SCAN_COUNT:
                converted += _flow_counts(client, key, batch, cluster)
                batch = []
        if batch:
            converted += _flow_counts(client, key, batch, cluster)
    return converted


def _flow_counts(client, key: str, fields: list[str], cluster: bool) -> int:
    from redis.exceptions import NoScriptError

    script_keys, args = FLOW_COUNTS.bind(status_counts=key, fields=fields)
    try:
        return int(client.evalsha(FLOW_COUNTS.sha, len(script_keys), *script_keys, *args))
    except NoScriptError:
        return int(client.eval(FLOW_COUNTS.source, len(script_keys), *script_keys, *args))


def _record_batches(client, cursor: int, cluster: bool):
    """(cursor to go on from, invocation record keys) per SCAN step; one node: from ``cursor``."""
    if cluster:
        found = [key for key in client.scan_iter(match=_RECORD_MATCH, count=SCAN_COUNT) if _is_record(key)]
        for start in range(0, len(found), SCAN_COUNT):
            yield 0, found[start : start + SCAN_COUNT]
        return
    while True:
        cursor, found = client.scan(cursor, match=_RECORD_MATCH, count=SCAN_COUNT)
        yield int(cursor), [key for key in found if _is_record(key)]
        if int(cursor) == 0:
            return


def _is_record(key: str) -> bool:
    """An invocation record's key (not its journal or settled stream: ids are escaped, so no ':' in them)."""
    return key.rsplit(":", 2)[-2] == "i"


def _owner(key: str) -> tuple[str, str, str]:
    """(app, user, invocation id) of a record key ``agentq:{<app>/<user>}:i:<id>`` (parts URL-escaped)."""
    tag, _, invocation_id = key[len("agentq:") :].rpartition(":i:")
    app, _, user = tag[1:-1].partition("/")
    return unquote(app), unquote(user), unquote(invocation_id)


def _migrate_records(client, record_keys: list[str], report: MigrationReport, *, retention_ms: int,
                     cluster: bool) -> None:
    now_ms = int(time.time() * 1000)
    commands = []
    for key in record_keys:
        app, user, invocation_id = _owner(key)
        shard = shard_of(app, user, cluster=cluster)
        commands.append(MIGRATE_RECORD.bind(
            record=key, status_counts=keys.status_counts(shard), user_parked=keys.user_parked(app, user),
            app_parked=keys.app_parked(app, shard), retention_due=keys.retention_due(shard),
            invocation_id=invocation_id, parked_member=dumps([user, invocation_id]), now_ms=now_ms,
            retention_ms=retention_ms))
        if cluster and shard:
            client.sadd(keys.shards(), shard)
    if cluster:
        replies = [_migrate_record_one(client, script_keys, args) for script_keys, args in commands]
    else:
        pipe = client.pipeline(transaction=False)
        for script_keys, args in commands:
            pipe.evalsha(MIGRATE_RECORD.sha, len(script_keys), *script_keys, *args)
        replies = pipe.execute()
    running: list[tuple[str, str, str, str]] = []
    for key, reply in zip(record_keys, replies, strict=True):
        report.records += 1
        if not reply:
            report.vanished += 1
            continue
        counted, indexed, persisted, due = (int(value) for value in reply[:4])
        report.counted += counted
        report.indexed += indexed
        report.persisted += persisted
        report.due += due
        if _text(reply[4]) == "running":
            app, user, invocation_id = _owner(key)
            running.append((app, user, _text(reply[5]), invocation_id))
    report.requeued += _requeue_unheld(client, running, now_ms=now_ms, cluster=cluster)


def _requeue_unheld(client, running: list[tuple[str, str, str, str]], *, now_ms: int, cluster: bool) -> int:
    """Running records no worker holds a lease on (the previous release's SIGTERM hand-back leaves one so when
    its re-sent run job is lost with the stopping worker): their dispatch-watchdog entry brought to now, so the
    next reaper pass sends the run job once (its ZREM picks one worker; a claim fences any duplicate) and a worker
    resumes the invocation from its committed events. How many were."""
    if not running:
        return 0
    leases = [client.exists(keys.session_lease(app, user, session)) for app, user, session, _ in running] \
        if cluster else _pipelined(client, [("EXISTS", keys.session_lease(app, user, session))
                                            for app, user, session, _ in running])
    requeued = 0
    for (app, user, _, invocation_id), held in zip(running, leases, strict=True):
        if int(held):
            continue  # a live worker's (an `agentq migrate` run by hand beside the fleet): it settles it
        # LT: an entry due sooner stays; a later one (or none) is brought to now
        client.execute_command("ZADD", keys.dispatch_due(shard_of(app, user, cluster=cluster)), "LT", now_ms,
                               invocation_id)
        requeued += 1
        log.info("invocation %s of %r/%r: running with no worker holding it; its run job is sent again",
                 invocation_id, app, user)
    return requeued


def _pipelined(client, commands: list[tuple]) -> list:
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return pipe.execute()


def _migrate_record_one(client, script_keys, args):
    """One MIGRATE_RECORD call on a Cluster client (its slot's node; loaded there on first use)."""
    from redis.exceptions import NoScriptError

    try:
        return client.evalsha(MIGRATE_RECORD.sha, len(script_keys), *script_keys, *args)
    except NoScriptError:
        return client.eval(MIGRATE_RECORD.source, len(script_keys), *script_keys, *args)


def _move_to_shards(client, report: MigrationReport) -> None:
    """On a Cluster: the older layout's single index hash spread over the id slots (``worker.records.store.index_key``),
    and its single retention set dropped (every record has its entry in its shard's set by now)."""
    old_index = keys.invocation_index()
    moved = 0
    for invocation_id, where in client.hscan_iter(old_index, count=SCAN_COUNT):
        client.hsetnx(keys.invocation_index(slot_tag(key_slot(invocation_id.encode()))), invocation_id, where)
        moved += 1
    if moved:
        report.moved[old_index] = moved
    client.delete(old_index, keys.retention_due())


def _is_cluster(client) -> bool:
    """True for a sync Redis Cluster client (what this module is handed)."""
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def migrate_url(url: str, *, retention_s: float, owner: str, check_only: bool = False,
                out: Callable[[str], None] = print, progress: Callable[[str], None] | None = None) -> int:
    """``agentq migrate`` on the store at ``url``: migrate it (or with ``check_only``, compare its layout with
    this code's), printing through ``out``; the exit code (1: ``check_only`` and the layouts differ)."""
    from runtime.redis_store.layout import LAYOUTS
    from runtime.redis_store.redis_url import redis_client_from_url

    client = redis_client_from_url(url, asyncio=False, decode_responses=True)
    try:
        version = stored_version(client)
        if check_only:
            out(f"store layout {version}: {LAYOUTS.get(version, 'newer than this code')}")
            out(f"this code   {LAYOUT_VERSION}: {LAYOUTS[LAYOUT_VERSION]}")
            return 0 if version == LAYOUT_VERSION else 1
        report = migrate_store(client, retention_s=retention_s, owner=owner, on_batch=progress and (
            lambda report: progress(f"  ... {report.records} record(s)")))
        for line in report.lines() if report else [f"layout {LAYOUT_VERSION}: nothing to do"]:
            out(line)
        return 0
    finally:
        client.close()
