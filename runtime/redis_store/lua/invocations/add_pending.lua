-- Record long-running calls as pending on the record (their answers are accepted from then on).
-- KEYS: record, lease
-- ARGV: token, calls...
--   calls: call_id, pending_json, call_id, pending_json, ...
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], 'p:' .. ARGV[i], ARGV[i + 1]) end
return 1
