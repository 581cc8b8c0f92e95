-- uses: claim_step, session_read
-- Claim: take the session lease for the queue head and bump the session's fencing token (lib/claim_step.lua).
-- KEYS: record, queue, lease, fence, stream, status_counts, session_meta, state, user_state, events, [app_state]
--   fence: the legacy fence key; the token lives in session_meta (lib/fence.lua)
--   state, user_state, events, app_state: the session's, read for the run the claim starts (app_state left out
--   on a Cluster, as the session read leaves it out)
-- ARGV: invocation_id, worker, lease_ms, now, held_version, held_count, held_last_sha
--   held_*: the copy of the session's history the worker holds (lib/session_read.lua; 0, 0, '' for none)
-- Returns {'ok', lease token, the claimed record's fields, its status before, the session read} (the read as
-- sessions/read_session_since.lua returns it: the run's first read of its session, without a round trip), or
-- why not: {'gone'}, {'settled', status}, {'not_head'}, {'held', holder}.
-- The record is read once, whole: the claim needs its status, owner and counters, and the worker gets it back.
local flat = redis.call('HGETALL', KEYS[1])
if #flat == 0 then return {'gone'} end
local f = {}
for i = 1, #flat, 2 do f[flat[i]] = flat[i + 1] end
local status = f.status
if not status then return {'gone'} end
if status ~= 'queued' and status ~= 'running' then return {'settled', status} end
if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[1] then return {'not_head'} end
local holder = redis.call('GET', KEYS[3])
if holder then return {'held', holder} end
local token = claim_step({record = KEYS[1], lease = KEYS[3], meta = KEYS[7], fence = KEYS[4], stream = KEYS[5],
                          status_counts = KEYS[6]}, ARGV[1], f, ARGV[2], ARGV[3], ARGV[4])
local fields = {}
for name, value in pairs(f) do
  fields[#fields + 1] = name
  fields[#fields + 1] = value
end
local read = read_session_since({meta = KEYS[7], state = KEYS[8], user_state = KEYS[9], events = KEYS[10],
                                 app_state = KEYS[11]}, ARGV[5], ARGV[6], ARGV[7])
return {'ok', token, fields, status, read}
