-- ARGV[i] is a pair count, followed by that many field/value pairs: HSET them on key (none when key is nil);
-- returns the index after them.
local function hset_from(key, i)
  local count = tonumber(ARGV[i])
  if key then
    -- In chunks: unpack() of thousands of values would overflow Lua's C stack.
    for first = i + 1, i + 2 * count, 2000 do
      redis.call('HSET', key, unpack(ARGV, first, math.min(first + 1999, i + 2 * count)))
    end
  end
  return i + 1 + 2 * count
end
