-- Delete a schedule: its hash, its runs list, its index and due entries (the invocations it enqueued stay).
-- KEYS: schedule, runs, user_schedules, due
-- ARGV: schedule_id, member
-- Returns 1 when it existed, else 0.
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[2])
return existed
