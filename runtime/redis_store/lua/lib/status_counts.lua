-- Exact invocation counts by status (keys.status_counts, read by worker.status_counts): every status change
-- moves the invocation between counters in the same step as it changes the record, so the counts never drift
-- from the records and a reader needs no scan. Fields: '<status>', 'a:<app>:<status>', 'u:<app>/<user>:<status>'.

-- A name escaped as keys.user_tag escapes it (Python's urllib.parse.quote with nothing safe): every byte but
-- ASCII letters, digits and '_.-~' as %XX. The Lua state runs in the C locale, so %w is ASCII only.
local function count_escape(name)
  return (string.gsub(name, '[^%w_%.%-~]', function(c) return string.format('%%%02X', string.byte(c)) end))
end
local function count_bump(counts, field, by)
  -- a counter back at zero leaves the hash, so it holds only the users and apps with invocations
  local now = redis.call('HINCRBY', counts, field, by)
  if now < 0 then
    -- a bug: a transition from a status this invocation was never counted in. Undone (the counter stays at
    -- zero), logged, and counted in '!underflows' (agentq_status_count_underflows_total on /metrics)
    redis.call('HINCRBY', counts, field, -by)
    redis.call('HINCRBY', counts, '!underflows', 1)
    redis.log(redis.LOG_WARNING, 'agentq: status count ' .. field .. ' would go below zero; left at 0')
    now = 0
  end
  if now == 0 then redis.call('HDEL', counts, field) end
end
-- count_move for a caller that read the record's 'app_name', 'user_id' and 'counted' already (who: those three
-- values, in that order, false when absent): the claim and the settle read the record once for all they need.
local function count_move_known(counts, record, who, from, to)
  if from == to then return end
  if not who[1] or not who[2] then return end  -- the record is gone (or never had an owner): nothing to count
  if not who[3] then
    from = nil  -- never counted in any status
    if not to then return end
    redis.call('HSET', record, 'counted', '1')
  end
  local app = count_escape(who[1])
  local user = 'u:' .. app .. '/' .. count_escape(who[2]) .. ':'
  app = 'a:' .. app .. ':'
  for _, change in ipairs({{from, -1}, {to, 1}}) do
    local status, by = change[1], change[2]
    if status then
      count_bump(counts, status, by)
      count_bump(counts, app .. status, by)
      count_bump(counts, user .. status, by)
    end
  end
end
-- Move the invocation of ``record`` from status ``from`` to ``to`` (either may be nil: created, removed).
-- Call it while the record still has its app_name and user_id.
-- A counted record carries ``counted`` = '1' (set here when it enters its first counted status): a record
-- written before counts existed (an older layout, runtime/redis_store/layout.py) is counted by its first
-- transition or by the migration, whichever comes first, never twice, and never subtracted before.
local function count_move(counts, record, from, to)
  if from == to then return end
  local who = redis.call('HMGET', record, 'app_name', 'user_id', 'counted')
  count_move_known(counts, record, who, from, to)
end
