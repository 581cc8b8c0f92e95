-- uses: invocation_status, inbox_feed
-- The park and settle steps, the ways the lease holder's run ends (invocations/settle.lua): 'parked' on pending
-- calls, or final ('completed', 'failed'). Both hand the session to the next invocation (the lease deleted, the
-- invocation off the queue), move the status count, write the record (its status, then the pairs from
-- ARGV[first_field] to the end, before the webhook notification that carries them) and the status entry, and
-- drop the reaper's and the watchdog's entries. A parked invocation joins the user's and the app's parked
-- indexes (the inbox); a final one leaves them and the active set, starts its retention, and one that had been
-- answered tells the inbox feed how it ended ('settled'). The caller checked the lease and trims the stream.
-- s: {record, queue, lease, stream, active, settled, lease_expiries, dispatch_due, journal, parked, webhook_due,
--     webhook_outbox, app_parked, inbox_changes, status_counts}
local function hand_over(s, invocation_id, status, now, status_data, first_field)
  count_move(s.status_counts, s.record, redis.call('HGET', s.record, 'status'), status)
  redis.call('HSET', s.record, 'status', status, 'updated_at', now)
  if #ARGV >= first_field then redis.call('HSET', s.record, unpack(ARGV, first_field)) end
  notify(s.record, s.webhook_due, s.webhook_outbox, invocation_id, status, now, '')
  redis.call('DEL', s.lease)
  redis.call('LREM', s.queue, 1, invocation_id)
  status_entry(s.stream, invocation_id, status_data)
  redis.call('ZREM', s.lease_expiries, invocation_id)
  redis.call('ZREM', s.dispatch_due, invocation_id)
end

-- parked_member: JSON [user, invocation_id], its member of app_parked.
local function park_step(s, invocation_id, now, status_data, parked_member, first_field)
  hand_over(s, invocation_id, 'parked', now, status_data, first_field)
  redis.call('ZADD', s.parked, redis.call('HGET', s.record, 'created_at'), invocation_id)
  app_parked_add(s.app_parked, s.record, parked_member)
  inbox_change(s.inbox_changes, s.record, invocation_id, 'parked')
  settled_entry(s.settled, 'parked', keep_ms(s.record))
end

local function settle_step(s, invocation_id, status, now, status_data, parked_member, first_field)
  pending_ids(s.record)
  redis.call('ZREM', s.active, invocation_id)
  hand_over(s, invocation_id, status, now, status_data, first_field)
  redis.call('ZREM', s.parked, invocation_id)
  redis.call('ZREM', s.app_parked, parked_member)
  if redis.call('HEXISTS', s.record, 'rseq') == 1 then
    inbox_change(s.inbox_changes, s.record, invocation_id, 'settled')
  end
  expire_final(s.record, s.settled, s.journal, status)
end
