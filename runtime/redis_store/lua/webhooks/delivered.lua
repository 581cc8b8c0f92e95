-- A notification was delivered: it leaves the outbox.
-- KEYS: due, outbox, stats
-- ARGV: id
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[3], 'delivered', 1) end
return 1
