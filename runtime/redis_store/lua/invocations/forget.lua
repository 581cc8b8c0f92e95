-- uses: status_counts
-- Retention's end for one final invocation: remove its record and what names it under its user's hash tag
-- (its listing and parked entries, its settled stream and tool journal), and its status count with it.
-- KEYS: record, settled, journal, user_invocations, parked, app_parked, status_counts
-- ARGV: invocation_id, parked_member
--   parked_member: JSON [user, invocation_id], its member of app_parked
-- The record has no TTL (lua/lib/invocation_status.lua expire_final): only this script removes it, so the
-- counts stay exact. Returns 'forgotten', or the status of a record that is not final (nothing is removed).
local status = redis.call('HGET', KEYS[1], 'status')
if status and status ~= 'completed' and status ~= 'failed' and status ~= 'cancelled' then return status end
-- A record already gone (an older layout's TTL expired it) has no count to remove, only its traces.
if status then count_move(KEYS[7], KEYS[1], status, nil) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[2])
return 'forgotten'
