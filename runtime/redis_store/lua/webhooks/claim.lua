-- Claim up to `limit` due notifications for one worker to send.
-- KEYS: due, outbox
-- ARGV: now_ms, hold_ms, limit
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
