-- After a pass over a claimed shard: score it by its earliest entry, read after the pass (worker.due_shards).
-- KEYS: index
-- ARGV: shard, claimed_ms, earliest_ms
--   claimed_ms: the score the claim wrote; a different score means a writer lowered it meanwhile (ZADD LT), and
--     that lower score is kept unless the earliest entry is earlier still
--   earliest_ms: '' when the shard's sets are empty (the member goes; the next writer adds it back)
-- Returns 1 when the score was replaced, 0 when a writer's lower score was kept.
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) == tonumber(ARGV[2]) then
  if ARGV[3] == '' then
    redis.call('ZREM', KEYS[1], ARGV[1])
  else
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  end
  return 1
end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[1], 'LT', ARGV[3], ARGV[1])
end
return 0
