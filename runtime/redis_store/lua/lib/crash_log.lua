-- The record's crash evidence (worker.attempts): the last CRASH_LOG_KEEP runs that ended in a crash, oldest
-- first, as a JSON list in the 'crash_log' field. entry is a Lua table (worker, isolated, at, and exit for a
-- crash seen by the worker that isolated the run).
local CRASH_LOG_KEEP = 10
local function log_crash(record, entry)
  local raw = redis.call('HGET', record, 'crash_log')
  local entries = {}
  if raw then entries = cjson.decode(raw) end
  table.insert(entries, entry)
  while #entries > CRASH_LOG_KEEP do table.remove(entries, 1) end
  redis.call('HSET', record, 'crash_log', cjson.encode(entries))
end
