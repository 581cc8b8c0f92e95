-- uses: crash_log
-- Give the lease up without settling; the invocation stays queue head.
-- KEYS: lease, record
-- ARGV: token, invocation_id, worker, now, crash_exit
--   crash_exit: '' for a hand-back (shutdown, lost connection); else how the quarantine process running the
--   invocation alone ended ('killed by SIGKILL', 'exit code 3'): a crash charged to it (worker.attempts).
-- The record notes the hand-back, so the next claim does not count a cut-off run (worker.attempts).
-- A lease that expired meanwhile (Redis was away longer than its TTL) counts as handed back too while no one
-- else took the session and the invocation is still running.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('HGET', KEYS[2], 'status') == 'running') then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[2], 'handed_back', 1)
  if ARGV[5] ~= '' then
    redis.call('HINCRBY', KEYS[2], 'crashes', 1)
    log_crash(KEYS[2], {worker = ARGV[3], isolated = true, exit = ARGV[5], at = tonumber(ARGV[4])})
  end
  return 1
end
return 0
