-- A delivery failed: the notification is tried again at next_ms.
-- KEYS: due, outbox, stats
-- ARGV: id, entry_json, next_ms
-- Nothing when it is no longer in the outbox (another worker delivered it after this one's hold ran out).
redis.call('HINCRBY', KEYS[3], 'failed', 1)
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
