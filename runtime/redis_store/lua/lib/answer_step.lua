-- uses: invocation_status, inbox_feed
-- The answer step, the one way a parked invocation goes back to 'queued' (invocations/respond.lua, which
-- stored the responses first): its status count, behind the session's queue again, off the parked indexes, the
-- inbox feed's change ('answered', or 'expired' for the reaper's answer to calls past their deadline), its
-- 'queued' status entry and its dispatch-watchdog entry (the caller then sends its run job).
-- a: {record, queue, stream, dispatch_due, parked, app_parked, inbox_changes, status_counts}
-- parked_member: JSON [user, invocation_id], its member of app_parked.
local function answer_step(a, invocation_id, status_data, due_ms, parked_member, expired)
  count_move(a.status_counts, a.record, 'parked', 'queued')
  redis.call('HSET', a.record, 'status', 'queued')
  redis.call('RPUSH', a.queue, invocation_id)
  redis.call('ZREM', a.parked, invocation_id)
  redis.call('ZREM', a.app_parked, parked_member)
  inbox_change(a.inbox_changes, a.record, invocation_id, expired and 'expired' or 'answered')
  status_entry(a.stream, invocation_id, status_data)
  redis.call('ZADD', a.dispatch_due, due_ms, invocation_id)
end
