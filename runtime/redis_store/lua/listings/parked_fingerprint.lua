-- A digest of many parked indexes, to tell whether any changed.
-- KEYS: parked_indexes...
local total, parts = 0, {}
for k = 1, #KEYS do
  local size = redis.call('ZCARD', KEYS[k])
  total = total + size
  if size > 0 then
    parts[#parts + 1] = k .. ':' .. size .. ':' .. redis.call('ZRANGE', KEYS[k], -1, -1)[1] .. ':'
      .. redis.call('ZRANGE', KEYS[k], 0, 0)[1]
  end
end
return {total, redis.sha1hex(table.concat(parts, ' '))}
