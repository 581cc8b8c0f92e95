-- The session's time index (keys.session_event_times): a sorted set of event indexes (members '%012d'), each
-- scored with the running maximum of the timestamps of the events up to it, so scores never fall as indexes
-- rise. It is sparse: a commit adds a checkpoint every TIME_INDEX_EVERY events (indexes 0, 16, 32, ...), not one
-- per event, and a read finds the exact first index between two checkpoints by reading the events in between
-- (at most TIME_INDEX_EVERY - 1). Sessions stored before have a checkpoint at every index and read the same.
local TIME_INDEX_EVERY = 16

-- Add event `index`'s checkpoint (score: the running maximum up to it) when it is one.
local function time_index_add(times, index, score)
  if index % TIME_INDEX_EVERY == 0 then
    redis.call('ZADD', times, score, string.format('%012d', index))
  end
end

-- The first index whose running maximum is at or after `after` (a timestamp, as text), or `len` when none is.
-- max_ts: the running maximum of the whole history (the meta hash's field; false when unknown).
local function time_index_first(times, events, len, after, max_ts)
  local t = tonumber(after)
  if max_ts and tonumber(max_ts) < t then return len end
  local below = redis.call('ZREVRANGEBYSCORE', times, '(' .. after, '-inf', 'LIMIT', 0, 1)[1]
  local above = redis.call('ZRANGEBYSCORE', times, after, '+inf', 'LIMIT', 0, 1)[1]
  local from, to = 0, len
  if below then from = tonumber(below) + 1 end
  if above then to = tonumber(above) end
  if from >= to then return to end
  -- Every event up to `below` is before `after` (its running maximum is), so the first event from there whose
  -- own timestamp is at or after it is the first index whose running maximum is.
  for i, raw in ipairs(redis.call('LRANGE', events, from, to - 1)) do
    if tonumber(cjson.decode(raw).timestamp) >= t then return from + i - 1 end
  end
  return to
end
