-- Extend a lease still held with this token.
-- KEYS: lease
-- ARGV: token, lease_ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
