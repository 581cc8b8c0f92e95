-- uses: cancel_step
-- Delete every key of a session; its invocations that are not final are cancelled (lib/cancel_step.lua).
-- KEYS: meta, state, events, times, stream, active, queue, lease, fence, artifact_index, user_sessions,
--       session_ids, parked, webhook_due, webhook_outbox, app_parked, inbox_changes, status_counts,
--       dispatch_due, lease_expiries, call_deadlines, invocation_keys..., file_keys...
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
local session = {queue = KEYS[7], lease = KEYS[8], meta = KEYS[1], fence = KEYS[9], stream = KEYS[5], active = KEYS[6],
                 parked = KEYS[13], webhook_due = KEYS[14], webhook_outbox = KEYS[15], app_parked = KEYS[16],
                 inbox_changes = KEYS[17], status_counts = KEYS[18], dispatch_due = KEYS[19],
                 lease_expiries = KEYS[20], call_deadlines = KEYS[21]}
local fields = {'finished_at', ARGV[2], 'cancel_reason', ARGV[5], 'error', ARGV[6]}
local cancelled, calls = {}, {}
for j = 1, n do
  local it = {id = ARGV[7 + j], record = KEYS[19 + 3 * j], settled = KEYS[20 + 3 * j], journal = KEYS[21 + 3 * j],
              member = ARGV[7 + n + m + j]}
  -- the app's audit index: added by the caller after
  local status, parked_on = cancel_step(session, it, ARGV[2], '', fields, ARGV[7], nil)
  if status then
    for _, call in ipairs(parked_on) do calls[#calls + 1] = it.id .. ' ' .. call end
    cancelled[#cancelled + 1] = it.id
  end
end
for i = 1, 10 do redis.call('DEL', KEYS[i]) end
for j = 1, m do redis.call('DEL', KEYS[21 + 3 * n + j]) end
redis.call('SREM', KEYS[11], ARGV[1])
redis.call('ZREM', KEYS[12], ARGV[1])
return {'ok', cancelled, calls, redis.call('SCARD', KEYS[11])}
