-- Read what changed in a session since the copy the caller holds.
-- KEYS: meta, state, user_state, events, times, [app_state]
-- ARGV: held_version, held_count, held_last_sha
--   the version, the number of events and the SHA1 of the last event's JSON of the copy the caller holds
-- Returns false when the session does not exist; else {meta, state, user state, app state, first, events}:
-- the events from index `first` on. `first` is the caller's count when its copy is the start of the stored
-- history (as many events were appended as the version moved, and its last event is the one stored at that
-- place; events are only ever appended), else 0: the whole history.
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local version = 0
for i = 1, #meta, 2 do
  if meta[i] == 'version' then version = tonumber(meta[i + 1]) end
end
local len = redis.call('LLEN', KEYS[4])
local held, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local first = 0
if count > 0 and count <= len and len - count == version - held
   and redis.sha1hex(redis.call('LINDEX', KEYS[4], count - 1)) == ARGV[3] then
  first = count
end
local events = {}
if first < len then events = redis.call('LRANGE', KEYS[4], first, -1) end
local app_state = {}
if KEYS[6] then app_state = redis.call('HGETALL', KEYS[6]) end
return {meta, redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), app_state, first, events}
