-- Drop stored responses that are now committed to the session.
-- KEYS: record, lease
-- ARGV: token, response_fields...
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local n = 0
for i = 2, #ARGV do n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
redis.call('HINCRBY', KEYS[1], 'waiting', -n)
return 1
