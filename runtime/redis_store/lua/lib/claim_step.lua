-- uses: invocation_status, crash_log, fence
-- The claim step, the one way an invocation becomes 'running' (invocations/acquire.lua): the session lease for
-- it, the fencing token bumped, the record marked running by the worker, its status count and status entry.
-- The caller checked it may claim (the queue head, no lease held, queued or running).

-- c: {record, lease, meta, fence, stream, status_counts} (meta: the session's meta hash, fence: its legacy fence
-- key, lib/fence.lua); f: the record's fields as the caller read them (HGETALL),
-- updated here with what the claim writes, so the caller returns the claimed record without reading it again.
-- Returns the lease token.
local function claim_step(c, invocation_id, f, worker, lease_ms, now)
  local status = f.status
  -- Still 'running' with no lease and no hand-back recorded: the previous run was cut off with its worker
  -- process (killed, crashed, or stalled past its lease). That process ran other invocations too, so the
  -- cut-off only makes this one a suspect (worker.attempts): it is never failed for it, but runs alone next.
  if status == 'running' then
    if f.handed_back then
      redis.call('HDEL', c.record, 'handed_back')
      f.handed_back = nil
    else
      f.suspected = tostring(redis.call('HINCRBY', c.record, 'suspected', 1))
      log_crash(c.record, {worker = f.worker or '', isolated = false, at = tonumber(now)})
      f.crash_log = redis.call('HGET', c.record, 'crash_log')
    end
  end
  local token = invocation_id .. '|' .. fence_next(c.meta, c.fence)
  redis.call('SET', c.lease, token, 'PX', lease_ms)
  -- nothing to move on a take-over (running already)
  count_move_known(c.status_counts, c.record, {f.app_name, f.user_id, f.counted}, status, 'running')
  if f.app_name and f.user_id then f.counted = '1' end
  local attempt = (tonumber(f.attempts) or 0) + 1
  redis.call('HSET', c.record, 'status', 'running', 'worker', worker, 'updated_at', now, 'attempts', attempt)
  f.status, f.worker, f.updated_at, f.attempts = 'running', worker, now, tostring(attempt)
  status_entry(c.stream, invocation_id,
               cjson.encode({status = 'running', detail = {attempt = attempt, worker = worker}}))
  return token
end
