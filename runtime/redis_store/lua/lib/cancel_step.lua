-- uses: invocation_status, inbox_feed, fence
-- The cancel step, the one way a queued, running or parked invocation becomes 'cancelled'
-- (invocations/cancel.lua, invocations/cancel_session.lua, invocations/enqueue_strategy.lua,
-- invocations/delete_session.lua). It leaves the session's queue; a running one loses its lease and the fence
-- is bumped, so its next commit is refused; it moves to the cancelled count; fields (a Lua list of field/value
-- pairs: cancel_reason, error, finished_at) are written before the webhook notification that carries them; the
-- audit entry ('' for none) joins the record (and audit_index, when given, gets audit_member); it leaves the
-- active set, the parked indexes and every reaper set (dispatch watchdog, lease expiry, call deadlines), so no
-- reaper re-sends the run job of a cancelled invocation; the inbox feed says so; its 'cancelled' status entry
-- goes on the stream and its retention starts. The caller trims the stream once after its cancels.
-- c: {queue, lease, meta, fence, stream, active, parked, webhook_due, webhook_outbox, app_parked, inbox_changes,
--     status_counts, dispatch_due, lease_expiries, call_deadlines}
-- it: {id, record, settled, journal, member (JSON [user, id]: its member of app_parked and of audit_index)}
-- Returns nil when the invocation is gone or final already; else its previous status and the ids of the calls
-- it was parked on.
local function is_final_status(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
local function cancel_step(c, it, now, status_data, fields, audit, audit_index)
  local status = redis.call('HGET', it.record, 'status')
  if not status or is_final_status(status) then return nil end
  redis.call('LREM', c.queue, 0, it.id)
  local holder = redis.call('GET', c.lease)
  if holder and string.sub(holder, 1, #it.id + 1) == it.id .. '|' then
    redis.call('DEL', c.lease)
    fence_next(c.meta, c.fence)
  end
  local calls = pending_ids(it.record)
  count_move(c.status_counts, it.record, status, 'cancelled')
  redis.call('HSET', it.record, 'status', 'cancelled', 'updated_at', now)
  if #fields > 0 then redis.call('HSET', it.record, unpack(fields)) end
  audit_append(it.record, audit, audit_index, it.member, now)
  notify(it.record, c.webhook_due, c.webhook_outbox, it.id, 'cancelled', now, '')
  redis.call('ZREM', c.active, it.id)
  redis.call('ZREM', c.parked, it.id)
  redis.call('ZREM', c.app_parked, it.member)
  redis.call('ZREM', c.dispatch_due, it.id)
  redis.call('ZREM', c.lease_expiries, it.id)
  for _, call in ipairs(calls) do redis.call('ZREM', c.call_deadlines, it.id .. ' ' .. call) end
  inbox_change(c.inbox_changes, it.record, it.id, 'cancelled')
  status_entry(c.stream, it.id, status_data)
  expire_final(it.record, it.settled, it.journal, 'cancelled')
  return status, calls
end
