-- uses: claim_step
-- Claim: take the session lease for the queue head and bump the session's fencing token (lib/claim_step.lua).
-- KEYS: record, queue, lease, fence, stream, status_counts
-- ARGV: invocation_id, worker, lease_ms, now
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status ~= 'queued' and status ~= 'running' then return {'settled', status} end
if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[1] then return {'not_head'} end
local holder = redis.call('GET', KEYS[3])
if holder then return {'held', holder} end
local token = claim_step({record = KEYS[1], lease = KEYS[3], fence = KEYS[4], stream = KEYS[5],
                          status_counts = KEYS[6]}, ARGV[1], status, ARGV[2], ARGV[3], ARGV[4])
return {'ok', token, redis.call('HGETALL', KEYS[1]), status}
