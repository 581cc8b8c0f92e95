-- Drop members a taker is done with (due/claim.lua) that still have the score the take gave them: a member
-- scored anew since (a heartbeat, a new dispatch, a postponement) is a live entry again and stays.
-- KEYS: index
-- ARGV: taken_score, members...
-- Returns how many were dropped.
local dropped = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    dropped = dropped + 1
  end
end
return dropped
