-- uses: answer_step
-- Store function responses to pending calls; a parked invocation goes back to queued (lib/answer_step.lua).
-- KEYS: record, queue, stream, dispatch_due, call_deadlines, parked, webhook_due, webhook_outbox, app_parked,
--       inbox_changes, status_counts, [app_audit]
-- ARGV: invocation_id, now, due_ms, status_data, audit, audit_member, responses...
--   audit: the answer's audit entry JSON ('' for none); audit_member: JSON [user, invocation_id], the
--   invocation's member of app_audit and of app_parked
--   responses: (call_id, name, will_continue, response_json) per response
-- A parked invocation goes back to queued, with its dispatch-watchdog entry; the caller then sends its run job.
-- It leaves the parked indexes, and the inbox feed says it was answered (or expired: the reaper's answer).
-- Returns {outcome, previous status, record fields} (outcome 'queued' or 'stored'), or an error outcome.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
local finals = {}
local names = {}
for i = 7, #ARGV, 4 do
  local pending = redis.call('HGET', KEYS[1], 'p:' .. ARGV[i])
  if not pending or finals[ARGV[i]] then return {'not_pending', ARGV[i]} end
  local name = cjson.decode(pending)['name']
  if ARGV[i + 1] ~= '' and ARGV[i + 1] ~= name then return {'wrong_name', ARGV[i], name} end
  if name == 'adk_request_confirmation' and ARGV[i + 1] == '' then
    -- a nameless answer to a confirmation (a named one was checked by the caller) must say yes or no
    local answer = cjson.decode(ARGV[i + 3])['response']
    if type(answer) ~= 'table' or type(answer['confirmed']) ~= 'boolean' then return {'bad_confirmation', ARGV[i]} end
  end
  if ARGV[i + 2] ~= '1' then finals[ARGV[i]] = true end
  names[i] = name
end
for i = 7, #ARGV, 4 do
  local seq = redis.call('HINCRBY', KEYS[1], 'rseq', 1)
  local response = ARGV[i + 3]
  if ARGV[i + 1] == '' then response = '{"name":' .. cjson.encode(names[i]) .. ',' .. string.sub(response, 2) end
  redis.call('HSET', KEYS[1], string.format('r:%08d', seq), response)
  if ARGV[i + 2] ~= '1' then
    redis.call('HDEL', KEYS[1], 'p:' .. ARGV[i])
    redis.call('ZREM', KEYS[5], ARGV[1] .. ' ' .. ARGV[i])
  end
end
redis.call('HINCRBY', KEYS[1], 'waiting', (#ARGV - 6) / 4)
audit_append(KEYS[1], ARGV[5], KEYS[12], ARGV[6], ARGV[2])
redis.call('HSET', KEYS[1], 'updated_at', ARGV[2])
local outcome = 'stored'
local expired = cjson.decode(ARGV[4])['detail']['expired']
if status == 'parked' then
  answer_step({record = KEYS[1], queue = KEYS[2], stream = KEYS[3], dispatch_due = KEYS[4], parked = KEYS[6],
               app_parked = KEYS[9], inbox_changes = KEYS[10], status_counts = KEYS[11]},
              ARGV[1], ARGV[4], ARGV[3], ARGV[6], expired)
  outcome = 'queued'
end
if redis.call('HEXISTS', KEYS[1], 'webhook') == 1 then  -- the reaper answering calls past their deadline
  if expired then notify(KEYS[1], KEYS[7], KEYS[8], ARGV[1], 'expired', ARGV[2], cjson.encode(expired)) end
end
return {outcome, status, redis.call('HGETALL', KEYS[1])}
