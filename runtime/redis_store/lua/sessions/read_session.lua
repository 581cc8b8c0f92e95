-- uses: time_index
-- Read a session: its meta, state, and its newest events (or those since a time).
-- KEYS: meta, state, user_state, events, times, [app_state]
-- ARGV: recent, after
--   recent: the number of newest events (0 = all); after: a timestamp ('' = none)
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local len = redis.call('LLEN', KEYS[4])
local start = 0
local recent = tonumber(ARGV[1])
if recent > 0 and len - recent > start then start = len - recent end
if ARGV[2] ~= '' then
  local max_ts = false
  for i = 1, #meta, 2 do
    if meta[i] == 'max_ts' then max_ts = meta[i + 1] end
  end
  local first = time_index_first(KEYS[5], KEYS[4], len, ARGV[2], max_ts)
  if first > start then start = first end
end
local events = {}
if start < len then events = redis.call('LRANGE', KEYS[4], start, -1) end
local app_state = {}
if KEYS[6] then app_state = redis.call('HGETALL', KEYS[6]) end
return {meta, redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), app_state, events}
