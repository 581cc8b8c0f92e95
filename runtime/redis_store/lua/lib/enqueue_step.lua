-- uses: invocation_status
-- The enqueue step, the one way an invocation becomes 'queued' when it is made (invocations/enqueue.lua,
-- invocations/enqueue_strategy.lua, schedules/fire.lua): its record from ARGV[first_field] to the end, its
-- 'queued' status count, the session's FIFO, the user's index, the 'queued' status entry (its first entry,
-- kept on the record) and the session's active set, which keeps the stream from being trimmed past it or
-- expired. q: {record, queue, user_invocations, stream, active, status_counts}.
-- Returns the queue's length and the status entry's id.
local function enqueue_step(q, invocation_id, created_at, status_data, first_field)
  redis.call('HSET', q.record, unpack(ARGV, first_field))
  count_move(q.status_counts, q.record, nil, 'queued')
  local length = redis.call('RPUSH', q.queue, invocation_id)
  redis.call('ZADD', q.user_invocations, created_at, invocation_id)
  local entry = status_entry(q.stream, invocation_id, status_data)
  redis.call('HSET', q.record, 'first_entry', entry)
  redis.call('ZADD', q.active, 'LT', entry_ms(entry), invocation_id)
  redis.call('PERSIST', q.stream)
  return length, entry
end
