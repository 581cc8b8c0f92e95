-- uses: invocation_status
-- Queue an invocation on its session: its record, the session's FIFO, the user's index, the 'queued' entry
-- and its status count.
-- KEYS: session_meta, record, queue, user_invocations, stream, active, status_counts
-- ARGV: invocation_id, created_at, status_data, fields...
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
count_move(KEYS[7], KEYS[2], nil, 'queued')
local n = redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
local entry = status_entry(KEYS[5], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], 'first_entry', entry)
-- The stream is not trimmed past an invocation that is not final (redis_store.streams' floor), nor expired.
redis.call('ZADD', KEYS[6], 'LT', entry_ms(entry), ARGV[1])
redis.call('PERSIST', KEYS[5])
return {n, entry}
