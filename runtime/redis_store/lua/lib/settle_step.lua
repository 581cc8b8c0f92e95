-- uses: invocation_status, inbox_feed
-- The park and settle steps, the ways the lease holder's run ends (invocations/settle.lua): 'parked' on pending
-- calls, or final ('completed', 'failed'). Both hand the session to the next invocation (the lease deleted, the
-- invocation off the queue), move the status count, write the record (its status, then the pairs from
-- ARGV[first_field] to the end, before the webhook notification that carries them) and the status entry, and
-- drop the reaper's and the watchdog's entries; both return the status entry's id. A parked invocation joins
-- the user's and the app's parked indexes (the inbox); a final one leaves them and the active set (its retention
-- runs from its finished_at: worker.fleet.sweeper), and one that had been answered tells the inbox feed how it
-- ended ('settled'). The caller checked the lease and trims the stream.
-- s: {record, queue, lease, stream, active, settled, lease_expiries, dispatch_due, journal, parked, webhook_due,
--     webhook_outbox, app_parked, inbox_changes, status_counts, lease_indexed}
--   lease_indexed: false when no heartbeat can have put the invocation in lease_expiries (its ZREM is skipped)
-- What the steps read of the record, once (one HGETALL: which fields it has and the values they need; a
-- record is a few hundred bytes, and HKEYS + HMGET cost two commands for the same), instead of a read per
-- question: v.has[field] (true when present), v.status, v.who ({app_name, user_id, counted}, as
-- count_move_known takes it), v.created_at, v.retention_s.
local function settle_view(record)
  local has, value = {}, {}
  local flat = redis.call('HGETALL', record)
  for i = 1, #flat, 2 do
    has[flat[i]] = true
    value[flat[i]] = flat[i + 1]
  end
  return {has = has, status = value.status, who = {value.app_name or false, value.user_id or false,
                                                    value.counted or false},
          created_at = value.created_at, retention_s = value.retention_s}
end

local function hand_over(s, v, invocation_id, status, now, status_data, first_field)
  count_move_known(s.status_counts, s.record, v.who, v.status, status)
  redis.call('HSET', s.record, 'status', status, 'updated_at', now, unpack(ARGV, first_field))
  if v.has.webhook then notify(s.record, s.webhook_due, s.webhook_outbox, invocation_id, status, now, '') end
  redis.call('DEL', s.lease)
  redis.call('LREM', s.queue, 1, invocation_id)
  local entry = status_entry(s.stream, invocation_id, status_data)
  if s.lease_indexed then redis.call('ZREM', s.lease_expiries, invocation_id) end
  redis.call('ZREM', s.dispatch_due, invocation_id)
  return entry
end

-- parked_member: JSON [user, invocation_id], its member of app_parked.
local function park_step(s, invocation_id, now, status_data, parked_member, first_field)
  local v = settle_view(s.record)
  local entry = hand_over(s, v, invocation_id, 'parked', now, status_data, first_field)
  redis.call('ZADD', s.parked, v.created_at, invocation_id)
  redis.call('ZADD', s.app_parked, math.floor(tonumber(v.created_at) * 1000), parked_member)  -- app_parked_add
  inbox_change(s.inbox_changes, s.record, invocation_id, 'parked')
  settled_entry(s.settled, 'parked', retention_ms(v.retention_s))
  return entry
end

local function settle_step(s, invocation_id, status, now, status_data, parked_member, first_field)
  local v = settle_view(s.record)
  for field in pairs(v.has) do  -- pending_ids: its unanswered calls are dropped with the run
    if string.sub(field, 1, 2) == 'p:' then redis.call('HDEL', s.record, field) end
  end
  redis.call('ZREM', s.active, invocation_id)
  local entry = hand_over(s, v, invocation_id, status, now, status_data, first_field)
  -- Only an answered invocation ('rseq', lua/invocations/respond.lua) was ever parked; the answer took it off
  -- the parked indexes already, and these are kept for what an older release may have left there.
  if v.has.rseq then
    redis.call('ZREM', s.parked, invocation_id)
    redis.call('ZREM', s.app_parked, parked_member)
    inbox_change(s.inbox_changes, s.record, invocation_id, 'settled')
  end
  -- No TTLs on its settled stream and tool journal: the sweeper's FORGET (lua/invocations/forget.lua) deletes
  -- both with the record once its retention has passed (its retention_due entry is written at enqueue), as
  -- DELETE session does; two PEXPIREs per settle bought nothing more.
  settled_add(s.settled, status)
  return entry
end
