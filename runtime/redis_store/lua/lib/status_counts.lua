-- Exact invocation counts by status (keys.status_counts, read by worker.records.status_counts), kept as flows:
-- every status change of an invocation adds 1 to ONE field per scope, '<scope><from>><to>' ('' for no status:
-- '<scope>>queued' when it is created, '<scope>completed>' when retention removes it), in the same step as it
-- changes the record, so the counts never drift from the records and a reader needs no scan. The fields only
-- grow (no HINCRBY -1, no HDEL at zero); the count of status S is the flows into S less the flows out of S,
-- which the reader works out from one HMGET of a scope's fields.
-- Two scopes are written: the app's 'a:<app>:' and the user's 'u:<app>/<user>:'. The deployment's counts are
-- the sum of its apps' (apps are few), which '!apps' lists (' <app> <app> '), written only when an app's first
-- creation flow is made. A user's fields leave the hash when retention removes its last invocation.
-- Nothing checks for a count below zero here (it would take a read of every flow of the scope per transition):
-- the readers do (worker.records.status_counts.count_underflows, agentq_status_count_underflows on /metrics).

local COUNT_STATUSES = {'queued', 'running', 'parked', 'completed', 'failed', 'cancelled'}
-- The moves between two statuses the status scripts make, each counted in one flow per scope. Any other one
-- is counted as a removal from 'from' and a creation in 'to' (two flows per scope), so the counts stay exact
-- whatever a script does; worker.records.status_counts.MOVES lists the same, in the same order (a test
-- compares them), and reads only these flows and the creations and removals.
local COUNT_MOVES = {
  {'queued', 'running'}, {'queued', 'cancelled'}, {'queued', 'failed'},
  {'running', 'parked'}, {'running', 'completed'}, {'running', 'failed'}, {'running', 'cancelled'},
  {'running', 'queued'},
  {'parked', 'queued'}, {'parked', 'cancelled'}, {'parked', 'failed'},
}
local COUNT_MOVE = {}
for _, move in ipairs(COUNT_MOVES) do COUNT_MOVE[move[1] .. '>' .. move[2]] = true end

-- A name escaped as keys.user_tag escapes it (Python's urllib.parse.quote with nothing safe): every byte but
-- ASCII letters, digits and '_.-~' as %XX. The Lua state runs in the C locale, so %w is ASCII only. An escaped
-- name holds no ' ' nor '>', which the field names and '!apps' use as separators.
local function count_escape(name)
  return (string.gsub(name, '[^%w_%.%-~]', function(c) return string.format('%%%02X', string.byte(c)) end))
end
local function count_flow(counts, scope, from, to)
  return redis.call('HINCRBY', counts, scope .. (from or '') .. '>' .. (to or ''), 1)
end
-- An app's first creation flow (HINCRBY answered 1) lists it in '!apps', once: at most once per status an
-- invocation can be created in, per app, ever.
local function count_list_app(counts, app)
  local listed = redis.call('HGET', counts, '!apps') or ' '
  if not string.find(listed, ' ' .. app .. ' ', 1, true) then
    redis.call('HSET', counts, '!apps', listed .. app .. ' ')
  end
end
-- A scope's flow fields (worker.records.status_counts.FLOWS, in the same order: a creation in each status,
-- a removal from each, then COUNT_MOVES), and the (from, to) of each.
local function count_flow_fields(scope)
  local fields, ends = {}, {}
  local function add(from, to)
    fields[#fields + 1] = scope .. from .. '>' .. to
    ends[#ends + 1] = {from, to}
  end
  for _, status in ipairs(COUNT_STATUSES) do add('', status) end
  for _, status in ipairs(COUNT_STATUSES) do add(status, '') end
  for _, move in ipairs(COUNT_MOVES) do add(move[1], move[2]) end
  return fields, ends
end
-- Each status's count in one scope (status -> flows in less flows out; absent: 0) from the HMGET of its
-- count_flow_fields.
local function count_net(values, ends)
  local net = {}
  for i, value in ipairs(values) do
    if value then
      local n, from, to = tonumber(value), ends[i][1], ends[i][2]
      if from ~= '' then net[from] = (net[from] or 0) - n end
      if to ~= '' then net[to] = (net[to] or 0) + n end
    end
  end
  return net
end
-- A user whose last invocation was just removed: when every one of its counts is back at zero, its flow
-- fields leave the hash (the hash holds only the users with invocations, and a user's fields do not outlive
-- its records). A count below zero (a bug) is logged and its fields are kept for the readers to find.
local function count_drop_user_if_empty(counts, scope)
  local fields, ends = count_flow_fields(scope)
  for status, n in pairs(count_net(redis.call('HMGET', counts, unpack(fields)), ends)) do
    if n ~= 0 then
      if n < 0 then
        redis.log(redis.LOG_WARNING, 'agentq: status count ' .. scope .. status .. ' is below zero: ' .. n)
      end
      return
    end
  end
  redis.call('HDEL', counts, unpack(fields))
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
  if from and to and not COUNT_MOVE[from .. '>' .. to] then  -- not one of COUNT_MOVES: out, then in
    count_move_known(counts, record, who, from, nil)
    from = nil
  end
  local app = count_escape(who[1])
  local user = 'u:' .. app .. '/' .. count_escape(who[2]) .. ':'
  if count_flow(counts, 'a:' .. app .. ':', from, to) == 1 and not from then count_list_app(counts, app) end
  count_flow(counts, user, from, to)
  if not to then count_drop_user_if_empty(counts, user) end
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
