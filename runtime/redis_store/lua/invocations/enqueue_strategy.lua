-- uses: invocation_status, stream_trim, hash_pairs, inbox_feed
-- Queue an invocation under a double-texting strategy (worker.double_texting), in one step with what the strategy
-- does to the invocations already live on the session (queued, running or parked):
--   reject:    queue it only when none is live;
--   interrupt: cancel every live one (a running one is fenced out of its next commit; what it committed stays),
--              then queue it;
--   rollback:  as interrupt, and hold the session lease for the rewind that follows (holder 'rewind:<id>'), so
--              no worker claims the new invocation before the session is put back (lua/invocations/rewind_end.lua
--              gives the lease up).
-- The queue steps are enqueue.lua's.
-- KEYS: session_meta, record, queue, user_invocations, stream, active, lease, fence, parked, webhook_due,
--       webhook_outbox, app_parked, inbox_changes, status_counts, live...
--   live: for each live invocation the caller read (interrupt, rollback), its record, settled stream and journal
-- ARGV: invocation_id, created_at, strategy, now, status_data, cancel_data, maxlen, slack, max_age_ms, audit,
--       hold_ms, live_ids..., cancel_fields..., fields...
--   live_ids: a count, then (id, app_parked member) per live record, in KEYS order; when the session's live set is
--             not exactly those ids, nothing is written and 'moved' is returned (the caller reads again and retries)
--   cancel_fields: a pair count, then the pairs HSET on each cancelled record; audit: the cancel's audit entry ('')
local function is_final(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end

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

-- Cancel the live invocations (cancel.lua's steps for each).
local cancel_at = 13 + 2 * live_count
local fields_at = cancel_at + 1 + 2 * tonumber(ARGV[cancel_at])
local cancelled, calls = {}, {}
for i = 1, live_count do
  local id, record = ARGV[11 + 2 * i], KEYS[12 + 3 * i]
  local status = redis.call('HGET', record, 'status')
  if status and not is_final(status) then
    redis.call('LREM', KEYS[3], 0, id)
    local lease = redis.call('GET', KEYS[7])
    if lease and string.sub(lease, 1, #id + 1) == id .. '|' then
      redis.call('DEL', KEYS[7])
      redis.call('INCR', KEYS[8])
    end
    for _, call in ipairs(pending_ids(record)) do calls[#calls + 1] = id .. ' ' .. call end
    count_move(KEYS[14], record, status, 'cancelled')
    redis.call('HSET', record, 'status', 'cancelled', 'updated_at', ARGV[4])
    hset_from(record, cancel_at)
    audit_append(record, ARGV[10], nil, '', ARGV[4])
    notify(record, KEYS[10], KEYS[11], id, 'cancelled', ARGV[4], '')
    redis.call('ZREM', KEYS[9], id)
    redis.call('ZREM', KEYS[12], ARGV[12 + 2 * i])
    inbox_change(KEYS[13], record, id, 'cancelled')
    status_entry(KEYS[5], id, ARGV[6])
    expire_final(record, KEYS[13 + 3 * i], KEYS[14 + 3 * i], 'cancelled')
    cancelled[#cancelled + 1] = id
  end
  redis.call('ZREM', KEYS[6], id)
end
if #cancelled > 0 then trim_stream(KEYS[5], KEYS[6], tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])) end

-- Queue the new one (enqueue.lua's steps).
redis.call('HSET', KEYS[2], unpack(ARGV, fields_at))
count_move(KEYS[14], KEYS[2], nil, 'queued')
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
local entry = status_entry(KEYS[5], ARGV[1], ARGV[5])
redis.call('HSET', KEYS[2], 'first_entry', entry)
redis.call('ZADD', KEYS[6], 'LT', entry_ms(entry), ARGV[1])
redis.call('PERSIST', KEYS[5])

local token = ''
if strategy == 'rollback' then
  if redis.call('EXISTS', KEYS[8]) == 0 then  -- as acquire.lua: a new session's fence starts at the clock in ms
    local now = redis.call('TIME')
    redis.call('SET', KEYS[8], string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
  end
  token = 'rewind:' .. ARGV[1] .. '|' .. redis.call('INCR', KEYS[8])
  redis.call('SET', KEYS[7], token, 'PX', ARGV[11])
end
return {'ok', entry, token, cancelled, calls, redis.call('LINDEX', KEYS[3], 0) or ''}
