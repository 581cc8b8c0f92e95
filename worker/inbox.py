"""The parked inbox across users and apps: pages, newest first, of every (app, user) pair a reader may see.

Each (app, user) has its own parked index (``keys.user_parked``, kept by the status scripts). One script merges
them on the server (a k-way merge: each index's newest entry after the cursor, its next one only when that
one is taken) into the newest ``page_size + 1`` and counts the total; a second round trip reads the page's
records. The order is the one of ``worker.listing`` (creation time, then id, both descending), so the cursor
(time, id) is exact across pairs: an invocation parked throughout is listed exactly once, whatever parks or
resumes meanwhile.

Cost: one round trip and O((pairs + page size) * log n) server work, flat in the number of parked invocations;
it grows with the number of (app, user) pairs looked at, which a filter by app and user narrows to one.

On Redis Cluster a script may only read one hash slot, so the pairs are grouped by the slot of their index:
each group's script gives its newest ``page_size + 1`` after the cursor, and the newest of those make the page
(one script call per slot in use, sent at once). On one node there is one group: one script, as before.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from redis.asyncio import RedisCluster
from redis.crc import key_slot

from runtime.errors import UsageError
from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.redis_store.lua import LuaScript

from .codec import decode_record
from .listing import Page, check_page_size, decode_token, encode_token
from .record import InvocationRecord

Pair = tuple[str, str]
"""(app, user)."""

_MERGE = LuaScript("""
-- KEYS: parked indexes; ARGV: top ('+inf' or the cursor's score), last id ('' = from the start), count
-- Returns {total size of all KEYS, then (key number, member, score) of the newest `count` entries after the
-- cursor, newest first}. Equal scores order by member, descending, as ZREVRANGEBYSCORE returns them.
-- A k-way merge: each index gives its newest entry first and its next one only when that one is taken, so
-- the work is one read per index plus one per entry returned.
local top, last, count = ARGV[1], ARGV[2], tonumber(ARGV[3])
local top_score = tonumber(top)
local function newer(a, b)
  if a.score ~= b.score then return a.score > b.score end
  return a.member > b.member
end
local function read(k, offset)  -- the index's entry at `offset` or later that is after the cursor
  while true do
    local got = redis.call('ZREVRANGEBYSCORE', KEYS[k], top, '-inf', 'WITHSCORES', 'LIMIT', offset, 1)
    if #got == 0 then return nil end
    local score = tonumber(got[2])
    if last == '' or score < top_score or got[1] < last then
      return {score = score, member = got[1], k = k, text = got[2], offset = offset}
    end
    offset = offset + 1
  end
end
local heap = {}
local function push(entry)
  heap[#heap + 1] = entry
  local i = #heap
  while i > 1 and newer(heap[i], heap[math.floor(i / 2)]) do
    local parent = math.floor(i / 2)
    heap[i], heap[parent] = heap[parent], heap[i]
    i = parent
  end
end
local function pop()
  local newest = heap[1]
  heap[1] = heap[#heap]
  heap[#heap] = nil
  local i = 1
  while true do
    local left, right, pick = 2 * i, 2 * i + 1, i
    if left <= #heap and newer(heap[left], heap[pick]) then pick = left end
    if right <= #heap and newer(heap[right], heap[pick]) then pick = right end
    if pick == i then return newest end
    heap[i], heap[pick] = heap[pick], heap[i]
    i = pick
  end
end
local total = 0
for k = 1, #KEYS do
  total = total + redis.call('ZCARD', KEYS[k])
  local head = read(k, 0)
  if head then push(head) end
end
local reply = {total}
while #heap > 0 and #reply < 1 + 3 * count do
  local entry = pop()
  reply[#reply + 1] = entry.k
  reply[#reply + 1] = entry.member
  reply[#reply + 1] = entry.text
  local following = read(entry.k, entry.offset + 1)
  if following then push(following) end
end
return reply
""")

_FINGERPRINT = LuaScript("""
-- KEYS: parked indexes. Returns {total size, a digest of each index's size and newest and oldest member}.
local total, parts = 0, {}
for k = 1, #KEYS do
  local size = redis.call('ZCARD', KEYS[k])
  total = total + size
  if size > 0 then
    parts[#parts + 1] = k .. ':' .. size .. ':' .. redis.call('ZRANGE', KEYS[k], -1, -1)[1] .. ':'
      .. redis.call('ZRANGE', KEYS[k], 0, 0)[1]
  end
end
return {total, redis.sha1hex(table.concat(parts, ' '))}
""")


async def user_pairs(redis: Any, apps: list[str], users: list[str] | None) -> list[Pair]:
    """(app, user) pairs of ``users`` in each of ``apps``; ``users`` None: every user with a session there."""
    if users is not None:
        return [(app, user) for app in apps for user in users]
    pipe = redis.pipeline(transaction=False)
    for app in apps:
        pipe.smembers(keys.app_users(app))
    members = await pipe.execute() if apps else []
    return [(app, text(user)) for app, found in zip(apps, members, strict=True) for user in sorted(map(text, found))]


async def parked_page(redis: Any, pairs: list[Pair], *, page_size: int = 25,
                      page_token: str | None = None) -> tuple[Page[InvocationRecord], int]:
    """A page of the parked invocations of ``pairs``, newest first, and how many are parked in all."""
    check_page_size(page_size)
    top, last = "+inf", ""
    if page_token:
        top, last = _cursor(page_token)
    groups = _slot_groups(redis, pairs)
    replies = await asyncio.gather(*(_MERGE(redis, [keys.user_parked(*pairs[n]) for n in group],
                                            [top, last, page_size + 1]) for group in groups))
    total, found = 0, []
    for group, reply in zip(groups, replies, strict=True):
        total, flat = total + int(reply[0]), reply[1:]
        found += [(pairs[group[int(flat[i]) - 1]], text(flat[i + 1]), float(flat[i + 2]))
                  for i in range(0, len(flat), 3)]
    if len(groups) > 1:  # each group's entries come newest first; the page is the newest of them all
        found.sort(key=lambda entry: (entry[2], entry[1]), reverse=True)
    page, more = found[:page_size], len(found) > page_size
    pipe = redis.pipeline(transaction=False)
    for (app, user), member, _ in page:
        pipe.hgetall(keys.invocation(app, user, member))
    records = []
    for fields in await pipe.execute() if page else []:
        record = decode_record({text(k): text(v) for k, v in fields.items()}) if fields else None
        if record is not None and record.status == "parked":  # else resumed or gone since the index was read
            records.append(record)
    token = encode_token("p", page[-1][2], page[-1][1]) if more else None
    return Page(items=records, next_page_token=token), total


async def fingerprint(redis: Any, pairs: list[Pair]) -> tuple[int, str]:
    """The parked total and a digest that changes when an invocation of ``pairs`` parks or leaves the inbox."""
    groups = _slot_groups(redis, pairs)
    replies = await asyncio.gather(*(_FINGERPRINT(redis, [keys.user_parked(*pairs[n]) for n in group], [])
                                     for group in groups))
    if len(groups) == 1:
        total, digest = replies[0]
        return int(total), text(digest)
    combined = hashlib.sha1(" ".join(text(digest) for _, digest in replies).encode()).hexdigest()
    return sum(int(total) for total, _ in replies), combined


def _slot_groups(redis: Any, pairs: list[Pair]) -> list[list[int]]:
    """Positions in ``pairs`` grouped so each group's parked indexes share a hash slot (one group on one node)."""
    if not isinstance(redis, RedisCluster):
        return [list(range(len(pairs)))]
    groups: dict[int, list[int]] = {}
    for n, (app, user) in enumerate(pairs):
        groups.setdefault(key_slot(keys.user_parked(app, user).encode()), []).append(n)
    return list(groups.values()) or [[]]


def _cursor(page_token: str) -> tuple[str, str]:
    """The (score, id) a page token holds, as the merge script takes them; UsageError for a made-up token."""
    position = decode_token(page_token, "p")
    try:
        score, last_id = position
        return repr(float(score)), str(last_id)
    except (TypeError, ValueError):
        raise UsageError(f"page token {page_token[:80]!r} is not one this listing handed out") from None
