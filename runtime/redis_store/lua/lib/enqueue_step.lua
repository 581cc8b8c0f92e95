-- uses: invocation_status
-- The enqueue step, the one way an invocation becomes 'queued' when it is made (invocations/enqueue.lua,
-- invocations/enqueue_strategy.lua, schedules/fire.lua): its record from ARGV[first_field] to the end, its
-- 'queued' status count, the session's FIFO, the user's index, the 'queued' status entry (its first entry,
-- kept on the record) and the session's active set, which keeps the stream from being trimmed past it or
-- expired. q: {record, queue, user_invocations, stream, active, status_counts}.
-- Returns the queue's length and the status entry's id.
local function enqueue_step(q, invocation_id, created_at, status_data, first_field)
  -- The record is written in one HSET with its first entry and its 'counted' mark, so the count moves
  -- without reading the record back (lib/status_counts.lua).
  local entry = status_entry(q.stream, invocation_id, status_data)
  local fields = {unpack(ARGV, first_field)}
  local who = {false, false, '1'}
  for i = 1, #fields - 1, 2 do
    if fields[i] == 'app_name' then who[1] = fields[i + 1] elseif fields[i] == 'user_id' then who[2] = fields[i + 1] end
  end
  fields[#fields + 1] = 'first_entry'
  fields[#fields + 1] = entry
  if who[1] and who[2] then
    fields[#fields + 1] = 'counted'
    fields[#fields + 1] = '1'
  end
  redis.call('HSET', q.record, unpack(fields))
  count_move_known(q.status_counts, q.record, who, nil, 'queued')
  local length = redis.call('RPUSH', q.queue, invocation_id)
  redis.call('ZADD', q.user_invocations, created_at, invocation_id)
  redis.call('ZADD', q.active, 'LT', entry_ms(entry), invocation_id)
  redis.call('PERSIST', q.stream)
  return length, entry
end
