-- uses: status_counts
-- Layout 1's per-status counters of one shard's status counts (worker.records.migrate) turned into the flows
-- this layout keeps (lua/lib/status_counts.lua), a batch of fields at a time, safe to run again: a counter of
-- n invocations of an app or a user in status S becomes n creation flows '<scope>>S' (its app listed in
-- '!apps'), and is removed; the deployment-wide counter '<S>' is removed only (readers add the apps up).
-- KEYS: status_counts
-- ARGV: fields...
--   fields: layout 1 counter fields ('<status>', 'a:<app>:<status>', 'u:<app>/<user>:<status>'), as HSCAN
--   listed them; one already converted (gone) is passed over
-- Returns how many counters were converted.
local converted = 0
for _, field in ipairs(ARGV) do
  local n = redis.call('HGET', KEYS[1], field)
  if n and not string.find(field, '>', 1, true) and string.sub(field, 1, 1) ~= '!' then
    local scope, status = string.match(field, '^(.*:)([^:]+)$')
    if scope and tonumber(n) ~= 0 then
      redis.call('HINCRBY', KEYS[1], scope .. '>' .. status, n)
      local app = string.match(scope, '^a:(.*):$')
      if app then count_list_app(KEYS[1], app) end
    end
    redis.call('HDEL', KEYS[1], field)
    converted = converted + 1
  end
end
return converted
