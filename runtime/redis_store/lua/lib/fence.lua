-- The session's fencing token, in the field 'fence' of its meta hash: the event commit reads it with the version
-- in the HMGET it makes anyway (sessions/commit_event.lua), so checking the fence costs no command of its own.
-- Sessions claimed before the field existed keep the token in a key of their own (keys.session_fence, the
-- legacy key): while the field is absent that key holds the token, and the first bump moves it into the field,
-- so older data needs no migration pass. A session gets the field when it is created (sessions/create_session.lua),
-- so its first claim is one HINCRBY.

local function clock_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end

-- The token a write is checked against, given the field as the caller read it (false when absent): the field,
-- else the legacy key (false when neither holds one).
local function fence_held(field, legacy)
  if field then return field end
  return redis.call('GET', legacy)
end

-- Bump the token and return it (text). A session without the field (new, re-created after a deletion, or from
-- before the field) starts above both its legacy key and the server clock in ms: above any token a stalled
-- holder from before a deletion could still present. A session whose meta hash is gone (deleted under a queued
-- invocation) gets no meta hash from this: its token stays in the legacy key, as before the field, and its
-- commits find the session missing.
local function fence_next(meta, legacy)
  local token = redis.call('HINCRBY', meta, 'fence', 1)
  if token == 1 then
    if redis.call('HLEN', meta) == 1 then  -- HINCRBY made the hash: there is no session
      redis.call('DEL', meta)
      token = redis.call('INCR', legacy)
      if token == 1 then
        token = clock_ms() + 1
        redis.call('SET', legacy, string.format('%d', token))
      end
      return string.format('%d', token)
    end
    local before = redis.call('GET', legacy)
    token = math.max(tonumber(before) or 0, clock_ms()) + 1
    redis.call('HSET', meta, 'fence', string.format('%d', token))
    if before then redis.call('DEL', legacy) end
  end
  return string.format('%d', token)
end
