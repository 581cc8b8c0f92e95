-- Extend many leases in one step (one node only: the leases live under many hash tags).
-- KEYS: leases...
-- ARGV: lease_ms, tokens...
local held = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    held[i] = 1
  else
    held[i] = 0
  end
end
return held
