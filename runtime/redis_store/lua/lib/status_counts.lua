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
  if redis.call('HINCRBY', counts, field, by) == 0 then redis.call('HDEL', counts, field) end
end
-- Move the invocation of ``record`` from status ``from`` to ``to`` (either may be nil: created, removed).
-- Call it while the record still has its app_name and user_id.
local function count_move(counts, record, from, to)
  if from == to then return end
  local who = redis.call('HMGET', record, 'app_name', 'user_id')
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
