-- uses: invocation_status, crash_log
-- The claim step, the one way an invocation becomes 'running' (invocations/acquire.lua): the session lease for
-- it, the fencing token bumped, the record marked running by the worker, its status count and status entry.
-- The caller checked it may claim (the queue head, no lease held, queued or running).

-- A new (or deleted and re-created) session's fence starts at the server clock in ms: above any token a stalled
-- holder from before a deletion could still present. Also used for a rewind's hold (enqueue_strategy.lua).
local function ensure_fence(fence)
  if redis.call('EXISTS', fence) == 0 then
    local now = redis.call('TIME')
    redis.call('SET', fence, string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
  end
end

-- c: {record, lease, fence, stream, status_counts}; status: the record's status before the claim.
-- Returns the lease token.
local function claim_step(c, invocation_id, status, worker, lease_ms, now)
  ensure_fence(c.fence)
  -- Still 'running' with no lease and no hand-back recorded: the previous run was cut off with its worker
  -- process (killed, crashed, or stalled past its lease). That process ran other invocations too, so the
  -- cut-off only makes this one a suspect (worker.attempts): it is never failed for it, but runs alone next.
  if status == 'running' and redis.call('HDEL', c.record, 'handed_back') == 0 then
    redis.call('HINCRBY', c.record, 'suspected', 1)
    log_crash(c.record, {worker = redis.call('HGET', c.record, 'worker') or '', isolated = false,
                         at = tonumber(now)})
  end
  local token = invocation_id .. '|' .. redis.call('INCR', c.fence)
  redis.call('SET', c.lease, token, 'PX', lease_ms)
  count_move(c.status_counts, c.record, status, 'running')  -- nothing to move on a take-over (running already)
  redis.call('HSET', c.record, 'status', 'running', 'worker', worker, 'updated_at', now)
  local attempt = redis.call('HINCRBY', c.record, 'attempts', 1)
  status_entry(c.stream, invocation_id,
               cjson.encode({status = 'running', detail = {attempt = attempt, worker = worker}}))
  return token
end
