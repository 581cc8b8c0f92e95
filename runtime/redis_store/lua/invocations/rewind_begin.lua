-- uses: fence
-- Take a session for a rewind (worker.rewind): only when nothing is queued, running or parked on it and no other
-- rewind holds it. The session lease is held as 'rewind:<id>|<fence>' with a fresh fence, so no worker claims an
-- invocation queued meanwhile and the rewind's commit is refused if the lease was lost (rewind_end.lua releases).
-- KEYS: session_meta, active, lease, fence
--   fence: the legacy fence key; the token lives in session_meta (lib/fence.lua)
-- ARGV: holder, hold_ms
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local live = redis.call('ZRANGE', KEYS[2], 0, -1)
if #live > 0 then return {'busy', live} end
local held = redis.call('GET', KEYS[3])
if held then return {'held', held} end
local token = ARGV[1] .. '|' .. fence_next(KEYS[1], KEYS[4])
redis.call('SET', KEYS[3], token, 'PX', ARGV[2])
return {'ok', token}
