-- uses: invocation_status, crash_log
-- Claim: take the session lease for the queue head and bump the session's fencing token.
-- KEYS: record, queue, lease, fence, stream, status_counts
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
-- Still 'running' with no lease and no hand-back recorded: the previous run was cut off with its worker
-- process (killed, crashed, or stalled past its lease). That process ran other invocations too, so the cut-off
-- only makes this one a suspect (worker.attempts): it is never failed for it, but runs alone next.
if status == 'running' and redis.call('HDEL', KEYS[1], 'handed_back') == 0 then
  redis.call('HINCRBY', KEYS[1], 'suspected', 1)
  log_crash(KEYS[1], {worker = redis.call('HGET', KEYS[1], 'worker') or '', isolated = false, at = tonumber(ARGV[4])})
end
local fence = redis.call('INCR', KEYS[4])
local token = ARGV[1] .. '|' .. fence
redis.call('SET', KEYS[3], token, 'PX', ARGV[3])
count_move(KEYS[6], KEYS[1], status, 'running')  -- nothing to move on a take-over (running already)
redis.call('HSET', KEYS[1], 'status', 'running', 'worker', ARGV[2], 'updated_at', ARGV[4])
local attempt = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
status_entry(KEYS[5], ARGV[1], cjson.encode({status = 'running', detail = {attempt = attempt, worker = ARGV[2]}}))
return {'ok', token, redis.call('HGETALL', KEYS[1]), status}
