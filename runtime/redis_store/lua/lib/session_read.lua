-- Read what changed in a session since the copy the caller holds (sessions/read_session_since.lua; the claim,
-- invocations/acquire.lua, returns it for the run it starts, so the run's first read costs no round trip).
-- s: {meta, state, user_state, events, app_state (nil when left out)}; held_version, held_count, held_last_sha:
-- the version, the number of events and the SHA1 of the last event's JSON of the copy the caller holds.
-- Returns false when the session does not exist; else {meta, state, user state, app state, first, events}:
-- the events from index `first` on. `first` is the caller's count when its copy is the start of the stored
-- history (as many events were appended as the version moved, and its last event is the one stored at that
-- place; events are only ever appended), else 0: the whole history.
local function read_session_since(s, held_version, held_count, held_last_sha)
  local meta = redis.call('HGETALL', s.meta)
  if #meta == 0 then return false end
  local version = 0
  for i = 1, #meta, 2 do
    if meta[i] == 'version' then version = tonumber(meta[i + 1]) end
  end
  local len = redis.call('LLEN', s.events)
  local held, count = tonumber(held_version), tonumber(held_count)
  local first = 0
  if count > 0 and count <= len and len - count == version - held
     and redis.sha1hex(redis.call('LINDEX', s.events, count - 1)) == held_last_sha then
    first = count
  end
  local events = {}
  if first < len then events = redis.call('LRANGE', s.events, first, -1) end
  local app_state = {}
  if s.app_state then app_state = redis.call('HGETALL', s.app_state) end
  return {meta, redis.call('HGETALL', s.state), redis.call('HGETALL', s.user_state), app_state, first, events}
end
