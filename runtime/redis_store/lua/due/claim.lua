-- Take the members of a sorted set that are due: each one scored at most now gets the score until, so another
-- worker's pass skips it while this one acts on it, and should this one die before it is done (a SIGKILL
-- between taking and acting), a pass takes it again at until. Used for the due-shards index (worker.due_shards)
-- and for the reaper's sets (worker.fleet.reaper), which hold per-invocation deadlines.
-- KEYS: index
-- ARGV: now_ms, until_ms, limit
--   now_ms, until_ms: in the set's own unit (the call deadlines are scored in seconds)
--   until_ms: the take's end; the taker then re-scores the member (due/settle.lua) or drops it (due/drop.lua)
-- Returns the members taken.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
