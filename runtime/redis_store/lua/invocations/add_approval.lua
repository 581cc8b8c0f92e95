-- Record one principal's approval of a parked confirmation that waits for a quorum of distinct approvers.
-- KEYS: record
-- ARGV: call_id, principal
-- Returns {'ok', approvals_json} (the approvers so far, this one last), {'duplicate', approvals_json},
-- {'not_pending'} (not parked on that call any more) or {'gone'}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status ~= 'parked' or redis.call('HEXISTS', KEYS[1], 'p:' .. ARGV[1]) == 0 then return {'not_pending'} end
local raw = redis.call('HGET', KEYS[1], 'a:' .. ARGV[1])
local approvals = {}
if raw then approvals = cjson.decode(raw) end
for _, who in ipairs(approvals) do
  if who == ARGV[2] then return {'duplicate', raw} end
end
table.insert(approvals, ARGV[2])
local encoded = cjson.encode(approvals)
redis.call('HSET', KEYS[1], 'a:' .. ARGV[1], encoded)
return {'ok', encoded}
