-- uses: cancel_step, stream_trim
-- Cancel every invocation live on a session (queued, running or parked) in one step (lib/cancel_step.lua for
-- each), so that cancelling the running one cannot hand the session to a queued one that is about to be
-- cancelled too: no worker can claim anything of the session in between.
-- KEYS: queue, lease, fence, stream, active, parked, webhook_due, webhook_outbox, app_parked, inbox_changes,
--       status_counts, dispatch_due, lease_expiries, call_deadlines, session_meta, invocation_keys..., [app_audit]
--   fence: the legacy fence key; the token lives in session_meta (lib/fence.lua)
--   invocation_keys: (record, settled, journal) per id in live_ids, in that order
--   app_audit: the app's audit index (left out on Redis Cluster, where it is another slot: the caller adds it)
-- ARGV: now, status_data, maxlen, slack, max_age_ms, audit, live_ids..., fields...
--   live_ids: a count, then (id, JSON [user, id]: its member of app_parked and app_audit) per live invocation the
--             caller read; when the session's active set or queue holds any other id, nothing is written and
--             'moved' is returned (the caller reads again and retries)
--   fields: the pairs HSET on each cancelled record (cancel_reason, error, finished_at)
-- Returns {'ok', cancelled ids, 'invocation_id call_id' of the calls they were parked on} or {'moved'}.
local count = tonumber(ARGV[7])
local declared = {}
for i = 1, count do declared[ARGV[6 + 2 * i]] = true end
for _, id in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
  if not declared[id] then return {'moved'} end
end
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if not declared[id] then return {'moved'} end
end
local audit_index = KEYS[16 + 3 * count]  -- nil when left out
local fields = {}
if #ARGV > 7 + 2 * count then fields = {unpack(ARGV, 8 + 2 * count)} end
local session = {queue = KEYS[1], lease = KEYS[2], meta = KEYS[15], fence = KEYS[3],
                 stream = KEYS[4], active = KEYS[5],
                 parked = KEYS[6], webhook_due = KEYS[7], webhook_outbox = KEYS[8], app_parked = KEYS[9],
                 inbox_changes = KEYS[10], status_counts = KEYS[11], dispatch_due = KEYS[12],
                 lease_expiries = KEYS[13], call_deadlines = KEYS[14]}
local cancelled, calls = {}, {}
for i = 1, count do
  local at = 13 + 3 * i
  local it = {id = ARGV[6 + 2 * i], record = KEYS[at], settled = KEYS[at + 1], journal = KEYS[at + 2],
              member = ARGV[7 + 2 * i]}
  local status, parked_on = cancel_step(session, it, ARGV[1], ARGV[2], fields, ARGV[6], audit_index)
  if status then
    for _, call in ipairs(parked_on) do calls[#calls + 1] = it.id .. ' ' .. call end
    cancelled[#cancelled + 1] = it.id
  end
  redis.call('ZREM', KEYS[5], it.id)
end
if #cancelled > 0 then trim_stream(KEYS[4], KEYS[5], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])) end
return {'ok', cancelled, calls}
