-- uses: fence
-- Save one artifact version, fenced like an event commit: a run that lost its lease (cancelled, rewound, taken
-- over) writes nothing, checked in the same step as the write (runtime.sessions.redis_session_service: fence_for).
-- KEYS: versions, index, fence_meta, fence
--   fence_meta: the meta hash whose 'fence' field holds the token; fence: that session's legacy fence key
-- ARGV: fence_token, entry, filename
--   fence_token: the writer's token ('' = unchecked: a save from outside a run)
-- Returns {'ok', version} or {'fenced', the current token or ''}.
if ARGV[1] ~= '' then
  local held = fence_held(redis.call('HGET', KEYS[3], 'fence'), KEYS[4])
  if held ~= ARGV[1] then return {'fenced', held or ''} end
end
local length = redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return {'ok', length - 1}
