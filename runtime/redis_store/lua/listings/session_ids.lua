-- One page of a user's session ids, in id order.
-- KEYS: user_sessions, session_ids
-- ARGV: after, count
--   user_sessions: a set; session_ids: a sorted set, all scores 0; after: '' = from the start
-- Sessions created before the sorted set existed are added to it first (the two counts differ then).
if redis.call('SCARD', KEYS[1]) ~= redis.call('ZCARD', KEYS[2]) then
  redis.call('DEL', KEYS[2])
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('ZADD', KEYS[2], 0, id) end
end
local min = '-'
if ARGV[1] ~= '' then min = '(' .. ARGV[1] end
return redis.call('ZRANGE', KEYS[2], min, '+', 'BYLEX', 'LIMIT', 0, ARGV[2])
