"""The Lua scripts behind the session service and the streams.

Every script touches only keys of one user's hash tag, except that on a single Redis node the app-state
hash rides along (KEYS beyond the user's) so an ``app:`` delta costs no extra trip; on Redis Cluster the
caller leaves those keys out and writes app state in a second trip.
"""

from __future__ import annotations

from .lua import LuaScript

# Stream ids are "ms-seq"; both halves fit a Lua number (a double) exactly.
STREAM_HELPERS = r"""
-- With a max age, a stream no invocation needs (none active) expires once its newest entry is that old:
-- trimmed by age without waiting for a next write. An active invocation keeps it.
local function expire_unneeded(stream, active, max_age_ms)
  if max_age_ms <= 0 then return end
  if redis.call('ZCARD', active) > 0 then
    redis.call('PERSIST', stream)
  else
    redis.call('PEXPIRE', stream, max_age_ms)
  end
end

local function id_less(a, b)
  local da, db = string.find(a, '-', 1, true), string.find(b, '-', 1, true)
  local am, bm = tonumber(string.sub(a, 1, da - 1)), tonumber(string.sub(b, 1, db - 1))
  if am ~= bm then return am < bm end
  return tonumber(string.sub(a, da + 1)) < tonumber(string.sub(b, db + 1))
end

-- Trim entries beyond maxlen (+slack, so trimming is batched) or older than max_age_ms, but never an
-- entry at or after the first entry of the oldest active invocation (the floor).
local function trim_entries(stream, active, maxlen, slack, max_age_ms)
  local len = redis.call('XLEN', stream)
  local too_long = maxlen > 0 and len > maxlen + slack
  if not too_long and max_age_ms <= 0 then return end
  local oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
  if not oldest then return end
  local age_cut = nil
  if max_age_ms > 0 then
    local now = redis.call('TIME')
    age_cut = string.format('%d-0', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - max_age_ms)
    if not too_long and not id_less(oldest[1], age_cut) then return end  -- nothing is old enough yet
  end
  local floor = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
  local floor_id = nil
  if floor[1] then floor_id = string.format('%d-0', tonumber(floor[2])) end
  if floor_id and not id_less(oldest[1], floor_id) then return end
  local cutoff = nil
  if too_long then
    local head = redis.call('XRANGE', stream, '-', '+', 'COUNT', len - maxlen + 1)
    cutoff = head[#head][1]
  end
  if age_cut and id_less(oldest[1], age_cut) and (cutoff == nil or id_less(cutoff, age_cut)) then
    cutoff = age_cut
  end
  if cutoff == nil then return end
  if floor_id and id_less(floor_id, cutoff) then cutoff = floor_id end
  if id_less(oldest[1], cutoff) then redis.call('XTRIM', stream, 'MINID', cutoff) end
end

local function trim_stream(stream, active, maxlen, slack, max_age_ms)
  trim_entries(stream, active, maxlen, slack, max_age_ms)
  expire_unneeded(stream, active, max_age_ms)
end
"""
"""``trim_stream(stream, active, maxlen, slack, max_age_ms)`` and its helpers, for any script that XADDs."""

_STREAM_HELPERS = STREAM_HELPERS

_HASH_HELPERS = r"""
-- args[i] is a pair count, followed by that many field/value pairs; returns the index after them.
local function hset_from(key, i, args)
  args = args or ARGV
  local count = tonumber(args[i])
  if key then
    -- In chunks: unpack() of thousands of values would overflow Lua's C stack.
    for first = i + 1, i + 2 * count, 2000 do
      redis.call('HSET', key, unpack(args, first, math.min(first + 1999, i + 2 * count)))
    end
  end
  return i + 1 + 2 * count
end
"""

CREATE_SESSION = LuaScript(
    _HASH_HELPERS
    + r"""
-- KEYS: meta, state, user_state, user_sessions, session_ids, [app_state, app_users]
-- ARGV: session id, app, user, now, then pair lists for session, user, app state
-- Returns 0 when the id is taken, else {user state, app state} (flat HGETALL replies).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'app', ARGV[2], 'user', ARGV[3], 'version', '0',
           'last_update_time', ARGV[4])
local i = hset_from(KEYS[2], 5)
i = hset_from(KEYS[3], i)
hset_from(KEYS[6], i)
redis.call('SADD', KEYS[4], ARGV[1])
-- Only when the sorted index is complete (its count matches): otherwise a listing rebuilds it from the set.
if redis.call('ZCARD', KEYS[5]) == redis.call('SCARD', KEYS[4]) - 1 then redis.call('ZADD', KEYS[5], 0, ARGV[1]) end
local app_state = {}
if KEYS[7] then
  redis.call('SADD', KEYS[7], ARGV[3])
  app_state = redis.call('HGETALL', KEYS[6])
end
-- A new session sees app and user state written by earlier sessions too.
return {redis.call('HGETALL', KEYS[3]), app_state}
"""
)

COMMIT_FUNCTION = (
    _STREAM_HELPERS
    + _HASH_HELPERS
    + r"""
-- K: meta, state, user_state, events, times, stream, fence, active, [app_state]
-- A: expected version ('' = whatever it is now), fence token ('' = unchecked), event JSON, timestamp,
--    invocation id, maxlen, slack, max_age_ms, then pair lists for session, user, app state
local function commit_event(K, A)
  local meta = redis.call('HMGET', K[1], 'version', 'max_ts')
  if not meta[1] then return {'missing'} end
  if A[2] ~= '' then
    local held = redis.call('GET', K[7])
    if held ~= A[2] then return {'fenced', held or ''} end
  end
  if A[1] ~= '' and meta[1] ~= A[1] then
    -- A client retrying a commit whose reply it lost finds its own event on top: report success, add nothing.
    if tonumber(meta[1]) == tonumber(A[1]) + 1 and redis.call('LINDEX', K[4], -1) == A[3] then
      return {'ok', tonumber(meta[1]), ''}
    end
    return {'stale', meta[1]}
  end
  local n = redis.call('RPUSH', K[4], A[3])
  -- Scores are the running maximum of timestamps, so the first index at or after a time is one ZRANGEBYSCORE.
  local score = A[4]
  if meta[2] and tonumber(meta[2]) > tonumber(score) then score = meta[2] end
  redis.call('ZADD', K[5], score, string.format('%012d', n - 1))
  local i = hset_from(K[2], 9, A)
  i = hset_from(K[3], i, A)
  hset_from(K[9], i, A)
  local new_version = tonumber(meta[1]) + 1
  redis.call('HSET', K[1], 'version', tostring(new_version), 'last_update_time', A[4], 'max_ts', score)
  local entry = redis.call('XADD', K[6], '*', 'kind', 'event', 'inv', A[5], 'data', A[3])
  trim_stream(K[6], K[8], tonumber(A[6]), tonumber(A[7]), tonumber(A[8]))
  return {'ok', new_version, entry}
end
"""
)
"""The commit of one event as a Lua function, for scripts that commit an event as one of their steps."""

COMMIT_EVENT = LuaScript(COMMIT_FUNCTION + "\nreturn commit_event(KEYS, ARGV)\n")

READ_SESSION = LuaScript(
    r"""
-- KEYS: meta, state, user_state, events, times, [app_state]
-- ARGV: number of recent events (0 = all), after timestamp ('' = none)
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local len = redis.call('LLEN', KEYS[4])
local start = 0
local recent = tonumber(ARGV[1])
if recent > 0 and len - recent > start then start = len - recent end
if ARGV[2] ~= '' then
  local first = redis.call('ZRANGEBYSCORE', KEYS[5], ARGV[2], '+inf', 'LIMIT', 0, 1)[1]
  if first == nil then start = len elseif tonumber(first) > start then start = tonumber(first) end
end
local events = {}
if start < len then events = redis.call('LRANGE', KEYS[4], start, -1) end
local app_state = {}
if KEYS[6] then app_state = redis.call('HGETALL', KEYS[6]) end
return {meta, redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), app_state, events}
"""
)

READ_SESSION_SINCE = LuaScript(
    r"""
-- KEYS: meta, state, user_state, events, times (unused), [app_state]  (the keys of READ_SESSION)
-- ARGV: the version, the number of events and the SHA1 of the last event's JSON of the copy the caller holds
-- Returns false when the session does not exist; else {meta, state, user state, app state, first, events}:
-- the events from index `first` on. `first` is the caller's count when its copy is the start of the stored
-- history (as many events were appended as the version moved, and its last event is the one stored at that
-- place; events are only ever appended), else 0: the whole history.
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local version = 0
for i = 1, #meta, 2 do
  if meta[i] == 'version' then version = tonumber(meta[i + 1]) end
end
local len = redis.call('LLEN', KEYS[4])
local held, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local first = 0
if count > 0 and count <= len and len - count == version - held
   and redis.sha1hex(redis.call('LINDEX', KEYS[4], count - 1)) == ARGV[3] then
  first = count
end
local events = {}
if first < len then events = redis.call('LRANGE', KEYS[4], first, -1) end
local app_state = {}
if KEYS[6] then app_state = redis.call('HGETALL', KEYS[6]) end
return {meta, redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), app_state, first, events}
"""
)

PUBLISH_ENTRY = LuaScript(
    _STREAM_HELPERS
    + r"""
-- KEYS: stream, active.  ARGV: kind, invocation id, data JSON, maxlen, slack, max_age_ms
local entry = redis.call('XADD', KEYS[1], '*', 'kind', ARGV[1], 'inv', ARGV[2], 'data', ARGV[3])
trim_stream(KEYS[1], KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
return entry
"""
)
