-- A dead letter goes back to the outbox, due at now_ms.
-- KEYS: due, outbox, dead, dead_entries
-- ARGV: id, entry_json, member, now_ms
if redis.call('HDEL', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
