-- uses: cancel_step, stream_trim
-- Cancel an invocation that is not final (lib/cancel_step.lua).
-- KEYS: record, queue, lease, fence, stream, active, settled, journal, parked, webhook_due, webhook_outbox,
--       app_parked, inbox_changes, status_counts, dispatch_due, lease_expiries, call_deadlines, session_meta,
--       [app_audit]
--   fence: the legacy fence key; the token lives in session_meta (lib/fence.lua)
-- ARGV: invocation_id, now, status_data, maxlen, slack, max_age_ms, audit, audit_member, fields...
--   audit: the cancel's audit entry JSON ('' for none), recorded before the webhook notification is built
--   audit_member: JSON [user, invocation_id], its member of app_audit and of app_parked
-- Returns {'ok', previous status, the session's new queue head ('' unless the cancelled one was the head), the
-- ids of the calls it was parked on}, {'gone'} or {'final', status}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if is_final_status(status) then return {'final', status} end
local was_head = redis.call('LINDEX', KEYS[2], 0) == ARGV[1]
local session = {queue = KEYS[2], lease = KEYS[3], meta = KEYS[18], fence = KEYS[4],
                 stream = KEYS[5], active = KEYS[6],
                 parked = KEYS[9], webhook_due = KEYS[10], webhook_outbox = KEYS[11], app_parked = KEYS[12],
                 inbox_changes = KEYS[13], status_counts = KEYS[14], dispatch_due = KEYS[15],
                 lease_expiries = KEYS[16], call_deadlines = KEYS[17]}
local it = {id = ARGV[1], record = KEYS[1], settled = KEYS[7], journal = KEYS[8], member = ARGV[8]}
local _, calls = cancel_step(session, it, ARGV[2], ARGV[3], {unpack(ARGV, 9)}, ARGV[7], KEYS[19])
trim_stream(KEYS[5], KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
local next_head = ''
if was_head then next_head = redis.call('LINDEX', KEYS[2], 0) or '' end
return {'ok', status, next_head, calls}
