-- Mark a tool call started in the tool journal, unless the invocation is over; returns what was there.
-- KEYS: journal, record
-- ARGV: call_id
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then return {'over'} end
-- A first start (the common case) is one HSETNX; a call already in the journal is read back as it is.
if redis.call('HSETNX', KEYS[1], ARGV[1], 's') == 1 then return {'ok', false} end
return {'ok', redis.call('HGET', KEYS[1], ARGV[1])}
