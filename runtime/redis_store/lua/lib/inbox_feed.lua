-- What an approver sees, kept in the status scripts: the app-wide parked index (keys.app_parked, beside each
-- user's parked index) and the inbox change feed (keys.inbox_changes), which API processes follow with blocking
-- reads instead of polling. Changes: parked, answered, expired, cancelled, and settled (an answered invocation
-- reached its final status).

-- About how many entries the feed keeps: keys.INBOX_CHANGES_MAXLEN (tests/worker/test_statuses.py checks it).
local INBOX_CHANGES_MAXLEN = 10000

local function inbox_change(feed, record, invocation_id, change)
  local who = redis.call('HMGET', record, 'app_name', 'user_id')
  redis.call('XADD', feed, 'MAXLEN', '~', INBOX_CHANGES_MAXLEN, '*',
             'app', who[1], 'user', who[2], 'inv', invocation_id, 'change', change)
end
-- member: JSON [user, invocation_id]; scored by the record's creation time in ms (user_parked has seconds)
local function app_parked_add(index, record, member)
  redis.call('ZADD', index, math.floor(tonumber(redis.call('HGET', record, 'created_at')) * 1000), member)
end
