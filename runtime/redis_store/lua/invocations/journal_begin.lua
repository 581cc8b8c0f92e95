-- Mark a tool call started in the tool journal, unless the invocation is over; returns what was there.
-- KEYS: journal, record
-- ARGV: call_id
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then return {'over'} end
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if not previous or previous == 's' then redis.call('HSET', KEYS[1], ARGV[1], 's') end
return {'ok', previous}
