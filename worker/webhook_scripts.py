"""The Lua scripts of the webhook outbox (``worker.webhook_outbox``); the notifications themselves are added by
``notify`` in ``worker.scripts``, in the same step as the status change they report."""

CLAIM = """
-- KEYS: due, outbox; ARGV: now_ms, hold_ms, limit
-- Each due id is pushed hold_ms into the future before it is returned: no other worker claims it meanwhile.
-- Returns the entries (JSON); ids whose entry is gone are dropped.
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
    out[#out + 1] = entry
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""

DELIVERED = """
-- KEYS: due, outbox, stats; ARGV: id
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[3], 'delivered', 1) end
return 1
"""

RETRY = """
-- KEYS: due, outbox, stats; ARGV: id, entry_json, next_ms
-- Nothing when it is no longer in the outbox (another worker delivered it after this one's hold ran out).
redis.call('HINCRBY', KEYS[3], 'failed', 1)
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

DEAD = """
-- KEYS: due, outbox, dead, dead_entries, stats; ARGV: id, entry_json, member, limit
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
"""

REDELIVER = """
-- KEYS: due, outbox, dead, dead_entries; ARGV: id, entry_json, member, now_ms
if redis.call('HDEL', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
"""
