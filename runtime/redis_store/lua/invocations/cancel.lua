-- uses: invocation_status, stream_trim, inbox_feed
-- Cancel an invocation that is not final.
-- KEYS: record, queue, lease, fence, stream, active, settled, journal, parked, webhook_due, webhook_outbox,
--       app_parked, inbox_changes, status_counts, [app_audit]
-- ARGV: invocation_id, now, status_data, maxlen, slack, max_age_ms, audit, audit_member, fields...
--   audit: the cancel's audit entry JSON ('' for none), recorded before the webhook notification is built
--   audit_member: JSON [user, invocation_id], its member of app_audit and of app_parked
-- Cancelling a running invocation deletes its lease and bumps the fence: its next commit is refused.
-- It leaves the parked indexes, moves to the cancelled count and the inbox feed says so.
-- Returns the ids of the calls it was parked on (their deadlines are dropped by the caller).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status == 'completed' or status == 'failed' or status == 'cancelled' then return {'final', status} end
local was_head = redis.call('LINDEX', KEYS[2], 0) == ARGV[1]
redis.call('LREM', KEYS[2], 0, ARGV[1])
local holder = redis.call('GET', KEYS[3])
if holder and string.sub(holder, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[3])
  redis.call('INCR', KEYS[4])
end
local calls = pending_ids(KEYS[1])
count_move(KEYS[14], KEYS[1], status, 'cancelled')
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updated_at', ARGV[2], unpack(ARGV, 9))
audit_append(KEYS[1], ARGV[7], KEYS[15], ARGV[8], ARGV[2])
notify(KEYS[1], KEYS[10], KEYS[11], ARGV[1], 'cancelled', ARGV[2], '')
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[9], ARGV[1])
redis.call('ZREM', KEYS[12], ARGV[8])
inbox_change(KEYS[13], KEYS[1], ARGV[1], 'cancelled')
status_entry(KEYS[5], ARGV[1], ARGV[3])
trim_stream(KEYS[5], KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
expire_final(KEYS[1], KEYS[7], KEYS[8], 'cancelled')
local next_head = ''
if was_head then next_head = redis.call('LINDEX', KEYS[2], 0) or '' end
return {'ok', status, next_head, calls}
