-- Claim the shards that are due in one copy of the due-shards index (worker.due_shards): their score is pushed
-- to until_ms, so another worker's pass skips them while this one reaps them.
-- KEYS: index
-- ARGV: now_ms, until_ms, limit
--   until_ms: the claim's end; the claimer settles the score to the shard's earliest entry after its pass
-- Returns the claimed shard tags.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, shard in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], shard)
end
return due
