-- A notification failed for the last time: it moves to the dead-letter list.
-- KEYS: due, outbox, dead, dead_entries, stats
-- ARGV: id, entry_json, member, limit
-- Moves it to the dead-letter list (newest `limit` kept).
redis.call('HINCRBY', KEYS[5], 'failed', 1)
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[5], 'dead', 1)
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[4])
if excess > 0 then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, excess - 1)) do
    redis.call('ZREM', KEYS[3], member)
    redis.call('HDEL', KEYS[4], string.match(member, '^%d+:(.*)$'))
  end
end
return 1
