-- The steps every invocation status change shares: its status entry on the session stream, the settled
-- stream, retention once final, the pending calls, and the webhook notification.
-- uses: status_counts

-- How long a final record is kept when it carries no retention of its own: worker.retention.DEFAULT_SETTLED_S
-- in ms (tests/worker/test_statuses.py checks they agree).
local DEFAULT_KEEP_MS = 604800000

local function status_entry(stream, invocation_id, data)
  return redis.call('XADD', stream, '*', 'kind', 'status', 'inv', invocation_id, 'data', data)
end
-- The settled stream's entry (worker.records.follow.wait blocks on it); settled_entry also gives it a TTL, for
-- the steps whose invocation may be forgotten by no sweeper pass (a parked one, an older record).
local function settled_add(key, status)
  redis.call('XADD', key, 'MAXLEN', '~', 16, '*', 'status', status)
end
local function settled_entry(key, status, keep_ms)
  settled_add(key, status)
  redis.call('PEXPIRE', key, keep_ms)
end
local function entry_ms(entry_id)
  return tonumber(string.match(entry_id, '^(%d+)'))
end
-- How long the record is kept once final: the retention it was stamped with at enqueue (older records: the
-- default). A cancel (expire_final) gives its settled stream and tool journal that TTL; a settle sets none, the
-- sweeper's FORGET deletes them. The record itself is removed by the sweeper (worker.sweeper,
-- lua/invocations/forget.lua), never by a TTL, so that its status count goes with it.
local function retention_ms(seconds)
  if seconds then return math.floor(tonumber(seconds) * 1000) end
  return DEFAULT_KEEP_MS
end
local function keep_ms(record)
  return retention_ms(redis.call('HGET', record, 'retention_s'))
end
local function expire_final(record, settled, journal, status)
  local keep = keep_ms(record)
  settled_entry(settled, status, keep)
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
  local f = redis.call('HMGET', record, 'app_name', 'user_id', 'session_id', 'status', 'error', 'cancel_reason',
                      'audit')
  redis.call('HSET', outbox, id, cjson.encode({
    id = id, url = url, event = event, inv = invocation_id, app = f[1], user = f[2], session = f[3],
    status = f[4], error = f[5] or '', reason = f[6] or '', calls = '[' .. table.concat(calls, ',') .. ']',
    expired = expired, audit = f[7] or '', at = now, attempts = 0}))
  redis.call('ZADD', due, math.floor(tonumber(now) * 1000), id)
end
-- An audit entry (worker.audit: who answered, cancelled or redelivered, when, from where) joins the record's
-- 'audit' JSON list in the same step as the change it describes; '' records nothing. On one node the app's audit
-- index (keys.app_audit) is given too and gets the invocation's member (its first entry's time); on Redis Cluster
-- it is another slot, and the caller adds the member after.
local function audit_append(record, entry, index, member, now)
  if entry == '' then return end
  local list = redis.call('HGET', record, 'audit')
  if list then list = string.sub(list, 1, -2) .. ',' .. entry .. ']' else list = '[' .. entry .. ']' end
  redis.call('HSET', record, 'audit', list)
  if index then redis.call('ZADD', index, 'NX', math.floor(tonumber(now) * 1000), member) end
end
