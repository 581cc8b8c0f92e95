-- Admit one enqueue for a principal and an app/user, or say which limit refuses it and for how long.
-- KEYS: principal_bucket, principal_inflight, scope_bucket, scope_inflight
-- ARGV: now_ms, principal_rate, principal_burst, principal_inflight_max, scope_rate, scope_burst,
--      scope_inflight_max, reservation, reservation_ttl_ms, inflight_ttl_ms
-- A bucket holds up to `burst` tokens and gains `rate` per second (rate 0: no bucket); an in-flight set holds
-- the invocation ids (and reservations `r:<id>`, scored by when they were taken) of one subject (max 0: none).
-- All or nothing: a refusal takes no token. Returns {0} when admitted (a token taken from each bucket,
-- `reservation` added to each in-flight set), {1, wait_ms, 'principal'|'user'} when a bucket is empty,
-- {2, count, 'principal'|'user'} when an in-flight set is full (the caller prunes settled ids and asks again).
local now = tonumber(ARGV[1])
local ttl_ms = tonumber(ARGV[9])

local function tokens_of(key, rate, burst)
  local saved = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(saved[1]) or burst
  local at = tonumber(saved[2]) or now
  return math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
end

local function count_of(key)
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now - ttl_ms)) do
    if string.sub(member, 1, 2) == 'r:' then redis.call('ZREM', key, member) end  -- an API died mid-enqueue
  end
  return redis.call('ZCARD', key)
end

local subjects = {
  {name = 'principal', bucket = KEYS[1], inflight = KEYS[2], rate = tonumber(ARGV[2]), burst = tonumber(ARGV[3]),
   max = tonumber(ARGV[4])},
  {name = 'user', bucket = KEYS[3], inflight = KEYS[4], rate = tonumber(ARGV[5]), burst = tonumber(ARGV[6]),
   max = tonumber(ARGV[7])},
}
for _, s in ipairs(subjects) do
  if s.rate > 0 then
    s.tokens = tokens_of(s.bucket, s.rate, s.burst)
    if s.tokens < 1 then
      return {1, math.ceil((1 - s.tokens) * 1000 / s.rate), s.name}
    end
  end
end
for _, s in ipairs(subjects) do
  if s.max > 0 then
    local count = count_of(s.inflight)
    if count >= s.max then return {2, count, s.name} end
  end
end
for _, s in ipairs(subjects) do
  if s.rate > 0 then
    redis.call('HSET', s.bucket, 'tokens', tostring(s.tokens - 1), 'at', tostring(now))
    redis.call('PEXPIRE', s.bucket, math.ceil(s.burst * 1000 / s.rate) + 1000)
  end
  if s.max > 0 then
    redis.call('ZADD', s.inflight, now, ARGV[8])
    redis.call('PEXPIRE', s.inflight, tonumber(ARGV[10]))
  end
end
return {0}
