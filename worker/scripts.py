"""The Lua scripts of the invocation lifecycle. Each touches only keys under one session's hash tag, and the
cross-session sets it keeps in step: RESPOND registers the resumed invocation with the dispatch watchdog, SETTLE
drops the reaper's and watchdog's entries, the status scripts add webhook notifications, and ACQUIRE may write
app state with the user's message. On one node those sets are global keys; on Redis Cluster the caller names
the user's shard of each (``worker.shards``: same slot) and leaves app state out (``app_apart``), so no script
crosses slots.

The session lease holds ``<invocation_id>|<fence>``: the fencing token makes a stale holder (paused, partitioned,
or reaped and superseded under the same invocation id) unable to heartbeat, settle or record anything.
Every status change XADDs its status entry (``kind``/``inv``/``data`` as in ``runtime.redis_store.streams``) in
the same script, so a follower never misses the entry that settles an invocation, even if the worker dies.
"""

from runtime.redis_store.scripts import STREAM_HELPERS

from .retention import DEFAULT_SETTLED_S

_STATUS = """
local function status_entry(stream, invocation_id, data)
  return redis.call('XADD', stream, '*', 'kind', 'status', 'inv', invocation_id, 'data', data)
end
local function settled_entry(key, status, keep_ms)
  redis.call('XADD', key, 'MAXLEN', '~', 16, '*', 'status', status)
  redis.call('PEXPIRE', key, keep_ms)
end
local function entry_ms(entry_id)
  return tonumber(string.match(entry_id, '^(%d+)'))
end
-- How long the record is kept once final: the retention it was stamped with at enqueue (older records: the
-- default). Its settled stream and tool journal expire with it; the sweeper (worker.sweeper) removes the rest.
local function keep_ms(record)
  local seconds = redis.call('HGET', record, 'retention_s')
  if seconds then return math.floor(tonumber(seconds) * 1000) end
  return DEFAULT_KEEP_MS
end
local function expire_final(record, settled, journal, status)
  local keep = keep_ms(record)
  settled_entry(settled, status, keep)
  redis.call('PEXPIRE', record, keep)
  redis.call('PEXPIRE', journal, keep)
end
local function pending_ids(record)
  local ids = {}
  for _, field in ipairs(redis.call('HKEYS', record)) do
    if string.sub(field, 1, 2) == 'p:' then
      redis.call('HDEL', record, field)
      ids[#ids + 1] = string.sub(field, 3)
    end
  end
  return ids
end
-- A webhook notification of this transition joins the outbox (worker.webhook_outbox) in the same step, when the
-- record has a webhook URL: a crash right after the change cannot lose it. Its id stays the same over retries;
-- the invocation's next transition gets the next one. Call it after the record took its new status.
local function notify(record, due, outbox, invocation_id, event, now, expired)
  local url = redis.call('HGET', record, 'webhook')
  if not url then return end
  local id = invocation_id .. '-' .. redis.call('HINCRBY', record, 'webhook_seq', 1)
  local calls = {}
  for _, field in ipairs(redis.call('HKEYS', record)) do
    if string.sub(field, 1, 2) == 'p:' then calls[#calls + 1] = redis.call('HGET', record, field) end
  end
  local f = redis.call('HMGET', record, 'app_name', 'user_id', 'session_id', 'status', 'error', 'cancel_reason')
  redis.call('HSET', outbox, id, cjson.encode({
    id = id, url = url, event = event, inv = invocation_id, app = f[1], user = f[2], session = f[3],
    status = f[4], error = f[5] or '', reason = f[6] or '', calls = '[' .. table.concat(calls, ',') .. ']',
    expired = expired, at = now, attempts = 0}))
  redis.call('ZADD', due, math.floor(tonumber(now) * 1000), id)
end
""".replace("DEFAULT_KEEP_MS", str(int(DEFAULT_SETTLED_S * 1000)))

ENQUEUE = _STATUS + """
-- KEYS: session_meta, record, queue, user_invocations, stream, active
-- ARGV: invocation_id, created_at, status_data, field, value, ...
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
local n = redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
local entry = status_entry(KEYS[5], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], 'first_entry', entry)
-- The stream is not trimmed past an invocation that is not final (redis_store.streams' floor), nor expired.
redis.call('ZADD', KEYS[6], 'LT', entry_ms(entry), ARGV[1])
redis.call('PERSIST', KEYS[5])
return {n, entry}
"""

ACQUIRE = _STATUS + """
-- KEYS: record, queue, lease, fence, stream
-- ARGV: invocation_id, worker, lease_ms, now
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status ~= 'queued' and status ~= 'running' then return {'settled', status} end
if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[1] then return {'not_head'} end
local holder = redis.call('GET', KEYS[3])
if holder then return {'held', holder} end
if redis.call('EXISTS', KEYS[4]) == 0 then
  -- A new (or deleted and re-created) session's fence starts at the server clock in ms: above any token a
  -- stalled holder from before a deletion could still present.
  local now = redis.call('TIME')
  redis.call('SET', KEYS[4], string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
end
local fence = redis.call('INCR', KEYS[4])
local token = ARGV[1] .. '|' .. fence
redis.call('SET', KEYS[3], token, 'PX', ARGV[3])
redis.call('HSET', KEYS[1], 'status', 'running', 'worker', ARGV[2], 'updated_at', ARGV[4])
local attempt = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
-- Still 'running' with no lease and no hand-back recorded: the previous run was cut off (its worker died, or
-- stalled past its lease). worker.attempts fails the invocation once too many runs ended that way.
if status == 'running' and redis.call('HDEL', KEYS[1], 'handed_back') == 0 then
  redis.call('HINCRBY', KEYS[1], 'interrupted', 1)
end
status_entry(KEYS[5], ARGV[1], cjson.encode({status = 'running', detail = {attempt = attempt, worker = ARGV[2]}}))
return {'ok', token, redis.call('HGETALL', KEYS[1]), status}
"""

HEARTBEAT = """
-- KEYS: lease; ARGV: token, lease_ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

HEARTBEAT_MANY = """
-- KEYS: lease, ...; ARGV: lease_ms, token, ...  (one node only: the leases live under many hash tags)
local held = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    held[i] = 1
  else
    held[i] = 0
  end
end
return held
"""

ADD_PENDING = """
-- KEYS: record, lease; ARGV: token, call_id, pending_json, ...
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], 'p:' .. ARGV[i], ARGV[i + 1]) end
return 1
"""

CONSUME = """
-- KEYS: record, lease; ARGV: token, response_field, ...  (responses now committed to the session)
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local n = 0
for i = 2, #ARGV do n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
redis.call('HINCRBY', KEYS[1], 'waiting', -n)
return 1
"""

SETTLE = _STATUS + STREAM_HELPERS + """
-- KEYS: record, queue, lease, stream, active, settled, lease_expiries, dispatch_due, journal, parked,
--       webhook_due, webhook_outbox
-- ARGV: token, invocation_id, status, now, status_data, stream trimming (maxlen, slack, max_age_ms), field,
--       value, ...  The stream is trimmed by age here, once per settle (commits trim by length only).
-- Parking while responses wait keeps the lease: the caller resumes at once ('continue').
-- The reaper's and the watchdog's entries go in the same step (global keys on one node; the user's shard on a
-- Cluster, see worker.shards).
-- A parked invocation joins the user's parked index (the inbox); a final one starts its retention.
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'lost'} end
if ARGV[3] == 'parked' and tonumber(redis.call('HGET', KEYS[1], 'waiting') or '0') > 0 then
  return {'continue'}
end
if ARGV[3] ~= 'parked' then
  pending_ids(KEYS[1])
  redis.call('ZREM', KEYS[5], ARGV[2])
end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'updated_at', ARGV[4])
if #ARGV > 8 then redis.call('HSET', KEYS[1], unpack(ARGV, 9)) end
notify(KEYS[1], KEYS[11], KEYS[12], ARGV[2], ARGV[3], ARGV[4], '')
redis.call('DEL', KEYS[3])
redis.call('LREM', KEYS[2], 1, ARGV[2])
status_entry(KEYS[4], ARGV[2], ARGV[5])
trim_stream(KEYS[4], KEYS[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]))
if ARGV[3] == 'parked' then
  redis.call('ZADD', KEYS[10], redis.call('HGET', KEYS[1], 'created_at'), ARGV[2])
  settled_entry(KEYS[6], ARGV[3], keep_ms(KEYS[1]))
else
  redis.call('ZREM', KEYS[10], ARGV[2])
  expire_final(KEYS[1], KEYS[6], KEYS[9], ARGV[3])
end
redis.call('ZREM', KEYS[7], ARGV[2])
redis.call('ZREM', KEYS[8], ARGV[2])
return {'ok', redis.call('LINDEX', KEYS[2], 0) or ''}
"""

RESPOND = _STATUS + """
-- KEYS: record, queue, stream, dispatch_due, call_deadlines, parked, webhook_due, webhook_outbox
-- ARGV: invocation_id, now, due_ms, resumed_status_data, then (call_id, name, will_continue, response_json) * n.
--       A response without a name (name '', response_json without a "name" key) gets the pending call's name.
-- A parked invocation goes back to queued, with its dispatch-watchdog entry; the caller then sends its run job.
-- Returns {outcome, previous status, record fields} (outcome 'queued' or 'stored'), or an error outcome.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
local finals = {}
local names = {}
for i = 5, #ARGV, 4 do
  local pending = redis.call('HGET', KEYS[1], 'p:' .. ARGV[i])
  if not pending or finals[ARGV[i]] then return {'not_pending', ARGV[i]} end
  local name = cjson.decode(pending)['name']
  if ARGV[i + 1] ~= '' and ARGV[i + 1] ~= name then return {'wrong_name', ARGV[i], name} end
  if name == 'adk_request_confirmation' and ARGV[i + 1] == '' then
    -- a nameless answer to a confirmation (a named one was checked by the caller) must say yes or no
    local answer = cjson.decode(ARGV[i + 3])['response']
    if type(answer) ~= 'table' or type(answer['confirmed']) ~= 'boolean' then return {'bad_confirmation', ARGV[i]} end
  end
  if ARGV[i + 2] ~= '1' then finals[ARGV[i]] = true end
  names[i] = name
end
for i = 5, #ARGV, 4 do
  local seq = redis.call('HINCRBY', KEYS[1], 'rseq', 1)
  local response = ARGV[i + 3]
  if ARGV[i + 1] == '' then response = '{"name":' .. cjson.encode(names[i]) .. ',' .. string.sub(response, 2) end
  redis.call('HSET', KEYS[1], string.format('r:%08d', seq), response)
  if ARGV[i + 2] ~= '1' then
    redis.call('HDEL', KEYS[1], 'p:' .. ARGV[i])
    redis.call('ZREM', KEYS[5], ARGV[1] .. ' ' .. ARGV[i])
  end
end
redis.call('HINCRBY', KEYS[1], 'waiting', (#ARGV - 4) / 4)
redis.call('HSET', KEYS[1], 'updated_at', ARGV[2])
local outcome = 'stored'
if status == 'parked' then
  redis.call('HSET', KEYS[1], 'status', 'queued')
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[6], ARGV[1])
  status_entry(KEYS[3], ARGV[1], ARGV[4])
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
  outcome = 'queued'
end
if redis.call('HEXISTS', KEYS[1], 'webhook') == 1 then  -- the reaper answering calls past their deadline
  local expired = cjson.decode(ARGV[4])['detail']['expired']
  if expired then notify(KEYS[1], KEYS[7], KEYS[8], ARGV[1], 'expired', ARGV[2], cjson.encode(expired)) end
end
return {outcome, status, redis.call('HGETALL', KEYS[1])}
"""

CANCEL = _STATUS + STREAM_HELPERS + """
-- KEYS: record, queue, lease, fence, stream, active, settled, journal, parked, webhook_due, webhook_outbox
-- ARGV: invocation_id, now, status_data, stream trimming (maxlen, slack, max_age_ms), field, value, ...
-- Cancelling a running invocation deletes its lease and bumps the fence: its next commit is refused.
-- Returns the ids of the calls it was parked on (their deadlines are dropped by the caller).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status == 'completed' or status == 'failed' or status == 'cancelled' then return {'final', status} end
local was_head = redis.call('LINDEX', KEYS[2], 0) == ARGV[1]
redis.call('LREM', KEYS[2], 0, ARGV[1])
local holder = redis.call('GET', KEYS[3])
if holder and string.sub(holder, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[3])
  redis.call('INCR', KEYS[4])
end
local calls = pending_ids(KEYS[1])
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updated_at', ARGV[2], unpack(ARGV, 7))
notify(KEYS[1], KEYS[10], KEYS[11], ARGV[1], 'cancelled', ARGV[2], '')
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[9], ARGV[1])
status_entry(KEYS[5], ARGV[1], ARGV[3])
trim_stream(KEYS[5], KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
expire_final(KEYS[1], KEYS[7], KEYS[8], 'cancelled')
local next_head = ''
if was_head then next_head = redis.call('LINDEX', KEYS[2], 0) or '' end
return {'ok', status, next_head, calls}
"""

RELEASE = """
-- KEYS: lease, record; ARGV: token, invocation_id  (give the lease up without settling; the invocation stays
-- queue head). The record notes the hand-back, so the next claim does not count a cut-off run (worker.attempts).
-- A lease that expired meanwhile (Redis was away longer than its TTL) counts as handed back too while no one
-- else took the session and the invocation is still running.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('HGET', KEYS[2], 'status') == 'running') then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[2], 'handed_back', 1)
  return 1
end
return 0
"""

DELETE_SESSION = _STATUS + """
-- KEYS: meta, state, events, times, stream, active, queue, lease, fence, artifact_index, user_sessions,
--       session_ids, parked, then (record, settled, journal) per invocation, then one key per artifact file,
--       then webhook_due, webhook_outbox
-- ARGV: session_id, now, invocation count, artifact count, cancel_reason, error_json, then the invocation
--       ids (every one in the session's active set or queue), then the artifact filenames (its artifact index)
-- Deletes every key of the session; its invocations that are not final are cancelled (they leave the parked
-- index, their records start their retention). 'changed' when the caller's lists are not complete any more
-- (an invocation or artifact was added meanwhile): read them again and retry.
-- Returns {'ok', cancelled ids, 'invocation_id call_id' of calls they were parked on, sessions the user has left}.
local n, m = tonumber(ARGV[3]), tonumber(ARGV[4])
local declared, files = {}, {}
for j = 1, n do declared[ARGV[6 + j]] = true end
for j = 1, m do files[ARGV[6 + n + j]] = true end
for _, id in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
  if not declared[id] then return {'changed'} end
end
for _, id in ipairs(redis.call('LRANGE', KEYS[7], 0, -1)) do
  if not declared[id] then return {'changed'} end
end
for _, name in ipairs(redis.call('SMEMBERS', KEYS[10])) do
  if not files[name] then return {'changed'} end
end
local cancelled, calls = {}, {}
for j = 1, n do
  local id = ARGV[6 + j]
  local record, settled, journal = KEYS[11 + 3 * j], KEYS[12 + 3 * j], KEYS[13 + 3 * j]
  local status = redis.call('HGET', record, 'status')
  if status and status ~= 'completed' and status ~= 'failed' and status ~= 'cancelled' then
    for _, call in ipairs(pending_ids(record)) do calls[#calls + 1] = id .. ' ' .. call end
    redis.call('HSET', record, 'status', 'cancelled', 'updated_at', ARGV[2], 'finished_at', ARGV[2],
               'cancel_reason', ARGV[5], 'error', ARGV[6])
    notify(record, KEYS[#KEYS - 1], KEYS[#KEYS], id, 'cancelled', ARGV[2], '')
    redis.call('ZREM', KEYS[13], id)
    expire_final(record, settled, journal, 'cancelled')
    cancelled[#cancelled + 1] = id
  end
end
for i = 1, 10 do redis.call('DEL', KEYS[i]) end
for j = 1, m do redis.call('DEL', KEYS[13 + 3 * n + j]) end
redis.call('SREM', KEYS[11], ARGV[1])
redis.call('ZREM', KEYS[12], ARGV[1])
return {'ok', cancelled, calls, redis.call('SCARD', KEYS[11])}
"""
