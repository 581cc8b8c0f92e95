-- Store a new schedule, or change one (its spec, paused, next tick), keeping the due set in step.
-- KEYS: schedule, user_schedules, due
-- ARGV: schedule_id, member, creating, expected_rev, created_ms, due_ms, fields...
--   creating: '1' to create (refused when the id is taken), '0' to update (refused when it is gone, or when
--   expected_rev is not '' and the schedule was changed since it was read); due_ms: '' leaves it off the due set (paused, ended).
-- Returns the new revision, 0 when refused (creating: taken; updating: gone), -1 when changed since read.
local exists = redis.call('EXISTS', KEYS[1]) == 1
if ARGV[3] == '1' then
  if exists then return 0 end
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
else
  if not exists then return 0 end
  if ARGV[4] ~= '' and redis.call('HGET', KEYS[1], 'rev') ~= ARGV[4] then return -1 end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
if ARGV[6] == '' then
  redis.call('ZREM', KEYS[3], ARGV[2])
else
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[2])
end
-- A new revision makes a scheduler that read the schedule before this change fire nothing (fire.lua).
return redis.call('HINCRBY', KEYS[1], 'rev', 1)
