-- uses: invocation_status, inbox_feed
-- Delete every key of a session; its invocations that are not final are cancelled.
-- KEYS: meta, state, events, times, stream, active, queue, lease, fence, artifact_index, user_sessions,
--       session_ids, parked, webhook_due, webhook_outbox, app_parked, inbox_changes, status_counts,
--       invocation_keys..., file_keys...
--   invocation_keys: (record, settled, journal) per invocation; file_keys: one key per artifact file
-- ARGV: session_id, now, invocation_count, file_count, cancel_reason, error_json, audit, invocation_ids..., filenames...,
--       parked_members...
--   audit: the cancel's audit entry JSON ('' for none; worker.audit), recorded on each invocation it cancels
--   invocation_ids: every one in the session's active set or queue; filenames: its artifact index
--   parked_members: JSON [user, invocation_id] of each of invocation_ids (its member of app_parked)
-- The cancelled invocations leave the parked indexes (and say so on the inbox feed) and move to the cancelled
-- count; their records start their retention. 'changed' when the caller's lists are not complete any more
-- (an invocation or artifact was added meanwhile): read them again and retry.
-- Returns {'ok', cancelled ids, 'invocation_id call_id' of calls they were parked on, sessions the user has left}.
local n, m = tonumber(ARGV[3]), tonumber(ARGV[4])
local declared, files = {}, {}
for j = 1, n do declared[ARGV[7 + j]] = true end
for j = 1, m do files[ARGV[7 + n + j]] = true end
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
  local id = ARGV[7 + j]
  local record, settled, journal = KEYS[16 + 3 * j], KEYS[17 + 3 * j], KEYS[18 + 3 * j]
  local status = redis.call('HGET', record, 'status')
  if status and status ~= 'completed' and status ~= 'failed' and status ~= 'cancelled' then
    for _, call in ipairs(pending_ids(record)) do calls[#calls + 1] = id .. ' ' .. call end
    count_move(KEYS[18], record, status, 'cancelled')
    redis.call('HSET', record, 'status', 'cancelled', 'updated_at', ARGV[2], 'finished_at', ARGV[2],
               'cancel_reason', ARGV[5], 'error', ARGV[6])
    audit_append(record, ARGV[7], nil, nil, ARGV[2])  -- the app's audit index: added by the caller after
    notify(record, KEYS[14], KEYS[15], id, 'cancelled', ARGV[2], '')
    redis.call('ZREM', KEYS[13], id)
    redis.call('ZREM', KEYS[16], ARGV[7 + n + m + j])
    inbox_change(KEYS[17], record, id, 'cancelled')
    expire_final(record, settled, journal, 'cancelled')
    cancelled[#cancelled + 1] = id
  end
end
for i = 1, 10 do redis.call('DEL', KEYS[i]) end
for j = 1, m do redis.call('DEL', KEYS[18 + 3 * n + j]) end
redis.call('SREM', KEYS[11], ARGV[1])
redis.call('ZREM', KEYS[12], ARGV[1])
return {'ok', cancelled, calls, redis.call('SCARD', KEYS[11])}
