-- Give the lease up without settling; the invocation stays queue head.
-- KEYS: lease, record
-- ARGV: token, invocation_id
-- The record notes the hand-back, so the next claim does not count a cut-off run (worker.attempts).
-- A lease that expired meanwhile (Redis was away longer than its TTL) counts as handed back too while no one
-- else took the session and the invocation is still running.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('HGET', KEYS[2], 'status') == 'running') then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[2], 'handed_back', 1)
  return 1
end
return 0
