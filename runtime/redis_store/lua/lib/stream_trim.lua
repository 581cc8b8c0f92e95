-- trim_stream(stream, active, maxlen, slack, max_age_ms, now_ms) and its helpers, for every script that XADDs.
-- Stream ids are "ms-seq"; both halves fit a Lua number (a double) exactly.
-- now_ms (optional): the stream's own clock, the ms part of the id the caller just XADDed (the server's time,
-- or the stream's last id when that is later), which spares the TIME call; without it, TIME.
-- With a max age, a stream no invocation needs (none active) expires once its newest entry is that old:
-- trimmed by age without waiting for a next write. An active invocation keeps it.
local function expire_unneeded(stream, active, max_age_ms)
  if max_age_ms <= 0 then return end
  if redis.call('ZCARD', active) > 0 then
    redis.call('PERSIST', stream)
  else
    redis.call('PEXPIRE', stream, max_age_ms)
  end
end

local function id_less(a, b)
  local da, db = string.find(a, '-', 1, true), string.find(b, '-', 1, true)
  local am, bm = tonumber(string.sub(a, 1, da - 1)), tonumber(string.sub(b, 1, db - 1))
  if am ~= bm then return am < bm end
  return tonumber(string.sub(a, da + 1)) < tonumber(string.sub(b, db + 1))
end

-- The stream's length and, when asked for, its oldest entry ({id, fields}, nil when there is none). With the
-- oldest entry, one XINFO STREAM instead of XLEN + XRANGE - + COUNT 1 (both read the same first entry); pcall:
-- a stream that is not there is empty.
local function stream_head(stream, with_oldest)
  if not with_oldest then return redis.call('XLEN', stream), nil end
  local info = redis.pcall('XINFO', 'STREAM', stream)
  if info.err then return 0, nil end
  local len, oldest = 0, nil
  for i = 1, #info, 2 do
    if info[i] == 'length' then
      len = info[i + 1]
    elseif info[i] == 'first-entry' then
      oldest = info[i + 1] or nil
    end
  end
  return len, oldest
end

-- Trim entries beyond maxlen (+slack, so trimming is batched) or older than max_age_ms, but never an
-- entry at or after the first entry of the oldest active invocation (the floor).
local function trim_entries(stream, active, maxlen, slack, max_age_ms, now_ms)
  local len, oldest = stream_head(stream, max_age_ms > 0)
  local too_long = maxlen > 0 and len > maxlen + slack
  if not too_long and max_age_ms <= 0 then return end
  if max_age_ms <= 0 then oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1] end
  if not oldest then return end
  local age_cut = nil
  if max_age_ms > 0 then
    if not now_ms then
      local now = redis.call('TIME')
      now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    end
    age_cut = string.format('%d-0', now_ms - max_age_ms)
    if not too_long and not id_less(oldest[1], age_cut) then return end  -- nothing is old enough yet
  end
  local floor = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
  local floor_id = nil
  if floor[1] then floor_id = string.format('%d-0', tonumber(floor[2])) end
  if floor_id and not id_less(oldest[1], floor_id) then return end
  local cutoff = nil
  if too_long then
    local head = redis.call('XRANGE', stream, '-', '+', 'COUNT', len - maxlen + 1)
    cutoff = head[#head][1]
  end
  if age_cut and id_less(oldest[1], age_cut) and (cutoff == nil or id_less(cutoff, age_cut)) then
    cutoff = age_cut
  end
  if cutoff == nil then return end
  if floor_id and id_less(floor_id, cutoff) then cutoff = floor_id end
  if id_less(oldest[1], cutoff) then redis.call('XTRIM', stream, 'MINID', cutoff) end
end

local function trim_stream(stream, active, maxlen, slack, max_age_ms, now_ms)
  trim_entries(stream, active, maxlen, slack, max_age_ms, now_ms)
  expire_unneeded(stream, active, max_age_ms)
end

-- How many commits apart a commit looks at the stream's length (sessions/commit_event.lua): a sixteenth of the
-- slack, so that the entries added between two looks (a commit's own, its invocation's status and partial
-- entries) stay within the slack in the common case; every commit when the slack is under 16.
local function trim_every(slack)
  return math.max(1, math.floor(slack / 16))
end
