-- uses: enqueue_step, cancel_step, fence, stream_trim
-- Queue an invocation under a double-texting strategy (worker.double_texting), in one step with what the strategy
-- does to the invocations already live on the session (queued, running or parked):
--   reject:    queue it only when none is live;
--   interrupt: cancel every live one (a running one is fenced out of its next commit; what it committed stays),
--              then queue it;
--   rollback:  as interrupt, and hold the session lease for the rewind that follows (holder 'rewind:<id>'), so
--              no worker claims the new invocation before the session is put back (lua/invocations/rewind_end.lua
--              gives the lease up).
-- The cancels are lib/cancel_step.lua's, the enqueue lib/enqueue_step.lua's.
-- KEYS: session_meta, record, queue, user_invocations, stream, active, lease, fence, parked, webhook_due,
--       webhook_outbox, app_parked, inbox_changes, status_counts, dispatch_due, lease_expiries, call_deadlines,
--       live...
--   live: for each live invocation the caller read (interrupt, rollback), its record, settled stream and journal
-- ARGV: invocation_id, created_at, strategy, now, status_data, cancel_data, maxlen, slack, max_age_ms, audit,
--       hold_ms, live_ids..., cancel_fields..., fields...
--   live_ids: a count, then (id, app_parked member) per live record, in KEYS order; when the session's live set is
--             not exactly those ids, nothing is written and 'moved' is returned (the caller reads again and retries)
--   cancel_fields: a pair count, then the pairs HSET on each cancelled record; audit: the cancel's audit entry ('')
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local strategy = ARGV[3]
local live_count = tonumber(ARGV[12])
local holder = redis.call('GET', KEYS[7])
if holder and string.sub(holder, 1, 7) == 'rewind:' and strategy == 'rollback' then
  return {'rewinding'}  -- one rewind at a time: the caller waits for this one and reads again
end
if strategy == 'reject' then
  local live = redis.call('ZRANGE', KEYS[6], 0, -1)
  if #live > 0 then return {'busy', live} end
else
  local expected = {}
  for i = 1, live_count do expected[ARGV[11 + 2 * i]] = true end
  local live = redis.call('ZRANGE', KEYS[6], 0, -1)
  if #live ~= live_count then return {'moved'} end
  for _, id in ipairs(live) do
    if not expected[id] then return {'moved'} end
  end
end

-- Cancel the live invocations.
local cancel_at = 13 + 2 * live_count
local fields_at = cancel_at + 1 + 2 * tonumber(ARGV[cancel_at])
local cancel_fields = {}
if fields_at > cancel_at + 1 then cancel_fields = {unpack(ARGV, cancel_at + 1, fields_at - 1)} end
local session = {queue = KEYS[3], lease = KEYS[7], meta = KEYS[1], fence = KEYS[8], stream = KEYS[5], active = KEYS[6],
                 parked = KEYS[9], webhook_due = KEYS[10], webhook_outbox = KEYS[11], app_parked = KEYS[12],
                 inbox_changes = KEYS[13], status_counts = KEYS[14], dispatch_due = KEYS[15],
                 lease_expiries = KEYS[16], call_deadlines = KEYS[17]}
local cancelled, calls = {}, {}
for i = 1, live_count do
  local it = {id = ARGV[11 + 2 * i], record = KEYS[15 + 3 * i], settled = KEYS[16 + 3 * i],
              journal = KEYS[17 + 3 * i], member = ARGV[12 + 2 * i]}
  local status, parked_on = cancel_step(session, it, ARGV[4], ARGV[6], cancel_fields, ARGV[10], nil)
  if status then
    for _, call in ipairs(parked_on) do calls[#calls + 1] = it.id .. ' ' .. call end
    cancelled[#cancelled + 1] = it.id
  end
  redis.call('ZREM', KEYS[6], it.id)
end
if #cancelled > 0 then trim_stream(KEYS[5], KEYS[6], tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])) end

-- Queue the new one.
local _, entry = enqueue_step({record = KEYS[2], queue = KEYS[3], user_invocations = KEYS[4], stream = KEYS[5],
                               active = KEYS[6], status_counts = KEYS[14]}, ARGV[1], ARGV[2], ARGV[5], fields_at)

local token = ''
if strategy == 'rollback' then
  token = 'rewind:' .. ARGV[1] .. '|' .. fence_next(KEYS[1], KEYS[8])
  redis.call('SET', KEYS[7], token, 'PX', ARGV[11])
end
return {'ok', entry, token, cancelled, calls, redis.call('LINDEX', KEYS[3], 0) or ''}
