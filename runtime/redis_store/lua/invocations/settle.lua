-- uses: settle_step, stream_trim
-- Settle: park, complete or fail the lease holder's invocation, and hand the session to the next one
-- (lib/settle_step.lua).
-- KEYS: record, queue, lease, stream, active, settled, lease_expiries, dispatch_due, journal, parked,
--       webhook_due, webhook_outbox, app_parked, inbox_changes, status_counts
-- ARGV: token, invocation_id, status, now, status_data, maxlen, slack, max_age_ms, parked_member, lease_indexed,
--       fields...
--   parked_member: JSON [user, invocation_id], the invocation's member of app_parked
--   lease_indexed: '0' when no heartbeat can have put the invocation in lease_expiries (the claim was never
--     beaten, nor taken over from an earlier holder): its ZREM there is skipped; anything else removes it
-- Parking while responses wait keeps the lease: the caller resumes at once ('continue').
-- The reaper's and the watchdog's entries go in the same step (global keys on one node; the user's shard on a
-- Cluster, see worker.shards), and so do the status counts and the inbox's change feed.
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'lost'} end
if ARGV[3] == 'parked' and tonumber(redis.call('HGET', KEYS[1], 'waiting') or '0') > 0 then
  return {'continue'}
end
local session = {record = KEYS[1], queue = KEYS[2], lease = KEYS[3], stream = KEYS[4], active = KEYS[5],
                 settled = KEYS[6], lease_expiries = KEYS[7], dispatch_due = KEYS[8], journal = KEYS[9],
                 parked = KEYS[10], webhook_due = KEYS[11], webhook_outbox = KEYS[12], app_parked = KEYS[13],
                 inbox_changes = KEYS[14], status_counts = KEYS[15], lease_indexed = ARGV[10] ~= '0'}
local entry
if ARGV[3] == 'parked' then
  entry = park_step(session, ARGV[2], ARGV[4], ARGV[5], ARGV[9], 11)
else
  entry = settle_step(session, ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[9], 11)
end
-- The status entry's id is the stream's clock: the trim by age needs no TIME call.
trim_stream(KEYS[4], KEYS[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), entry_ms(entry))
return {'ok', redis.call('LINDEX', KEYS[2], 0) or ''}
