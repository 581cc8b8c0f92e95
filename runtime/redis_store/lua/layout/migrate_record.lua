-- uses: status_counts
-- One invocation record brought to the current layout (worker.migrate), beside live transitions and safe to
-- run again: counted once in its status (the 'counted' marker, lua/lib/status_counts.lua), a parked one in
-- the app-wide parked index, an older layout's TTL taken off (retention removes it: worker.sweeper), and
-- its retention entry added where it has none or brought forward to when this layout's retention is due.
-- KEYS: record, status_counts, user_parked, app_parked, retention_due
-- ARGV: invocation_id, parked_member, now_ms, retention_ms
--   parked_member: JSON [user, invocation_id], its member of app_parked
--   retention_ms: for a record stamped with no retention_s of its own
-- Returns {counted, indexed, persisted, due, status, session_id}, the first four 1 for each step that changed
-- something (the last two let the caller look for a running record no worker holds); {} for a record that is
-- gone (or not an invocation record).
local status = redis.call('HGET', KEYS[1], 'status')
if not status or not redis.call('HGET', KEYS[1], 'app_name') then return {} end
local done = {0, 0, 0, 0}
if not redis.call('HGET', KEYS[1], 'counted') then
  count_move(KEYS[2], KEYS[1], nil, status)
  done[1] = 1
end
local created = tonumber(redis.call('HGET', KEYS[1], 'created_at') or '0') or 0
if status == 'parked' then
  redis.call('ZADD', KEYS[3], 'NX', created, ARGV[1])
  done[2] = redis.call('ZADD', KEYS[4], 'NX', math.floor(created * 1000), ARGV[2])
end
if redis.call('PTTL', KEYS[1]) > 0 then
  redis.call('PERSIST', KEYS[1])
  done[3] = 1
end
-- its own retention (stamped at enqueue), else the migrating process's
local keep_ms = tonumber(redis.call('HGET', KEYS[1], 'retention_s') or '')
keep_ms = keep_ms and math.floor(keep_ms * 1000) or tonumber(ARGV[4])
local due = tonumber(ARGV[3]) + keep_ms
if status == 'completed' or status == 'failed' or status == 'cancelled' then
  local finished = tonumber(redis.call('HGET', KEYS[1], 'finished_at') or '') or
                   tonumber(redis.call('HGET', KEYS[1], 'updated_at') or '') or created
  due = math.floor(finished * 1000) + keep_ms
end
-- LT: an older layout's entry (its creation plus its own retention) moves up to this layout's due time
done[4] = redis.call('ZADD', KEYS[5], 'LT', 'CH', due, ARGV[1])
done[5] = status
-- its session only where the caller looks for its lease: a running record
done[6] = status == 'running' and (redis.call('HGET', KEYS[1], 'session_id') or '') or ''
return done
