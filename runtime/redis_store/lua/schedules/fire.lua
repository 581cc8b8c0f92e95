-- uses: enqueue_step
-- Fire one tick of a schedule, or a run triggered by hand: enqueue its invocation (lib/enqueue_step.lua, as
-- invocations/enqueue.lua does, with its status count, plus the index, watchdog and sweeper entries
-- store.enqueue adds) and move the schedule to its next tick, all in one step. A tick is fired at most once:
-- the step only happens while the schedule still has the revision and next tick the scheduler read, and it
-- replaces that next tick, so a second scheduler holding the same tick (a paused one, one that lost a race)
-- finds it gone and fires nothing.
-- KEYS: schedule, runs, due, session_meta, record, queue, user_invocations, stream, active, invocation_index,
--       dispatch_due, retention_due, status_counts
-- ARGV: member, rev, expected_tick, next_tick, next_due_ms, fire_tick, missed, runs_kept, invocation_id,
--       created_at, status_data, location, dispatch_due_ms, retention_due_ms, now_ms, skip_reason, fields...
--   expected_tick: the next tick read ('' for a run by hand: no tick is consumed); next_tick and next_due_ms:
--   what replaces it ('' when the schedule has ended); fire_tick: the tick enqueued ('' skips this one: the
--   missed-tick policy 'skip'); missed: ticks passed over without a run; skip_reason: why a tick is skipped
--   other than by the policy (the enqueue rate limit refused it; '' for none), kept on the schedule with a count
--   of such ticks.
-- Returns {'stale'} (changed, paused, deleted or already fired), {'advanced'} (nothing enqueued),
-- {'no_session', ...} (the session is gone: the tick is consumed but nothing enqueued) or {'fired', entry}.
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[2] then return {'stale'} end
if ARGV[3] ~= '' then
  if redis.call('HGET', KEYS[1], 'paused') == '1' then return {'stale'} end
  if redis.call('HGET', KEYS[1], 'next_tick') ~= ARGV[3] then return {'stale'} end
  redis.call('HSET', KEYS[1], 'next_tick', ARGV[4])
  if ARGV[5] == '' then redis.call('ZREM', KEYS[3], ARGV[1]) else redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1]) end
  if tonumber(ARGV[7]) > 0 then redis.call('HINCRBY', KEYS[1], 'missed', ARGV[7]) end
end
if ARGV[6] == '' then
  if ARGV[16] ~= '' then
    redis.call('HSET', KEYS[1], 'last_skip_reason', ARGV[16], 'last_skip_ms', ARGV[15])
    redis.call('HINCRBY', KEYS[1], 'skipped', 1)
  end
  return {'advanced'}
end
if redis.call('EXISTS', KEYS[4]) == 0 then
  redis.call('HSET', KEYS[1], 'last_error', 'session does not exist', 'last_error_ms', ARGV[15])
  return {'no_session'}
end
-- The invocation, queued as every new one is.
local _, entry = enqueue_step({record = KEYS[5], queue = KEYS[6], user_invocations = KEYS[7], stream = KEYS[8],
                               active = KEYS[9], status_counts = KEYS[13]}, ARGV[9], ARGV[10], ARGV[11], 17)
redis.call('HSET', KEYS[10], ARGV[9], ARGV[12])
redis.call('ZADD', KEYS[11], ARGV[13], ARGV[9])
redis.call('ZADD', KEYS[12], ARGV[14], ARGV[9])
-- The schedule's link to its run, newest kept.
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[9])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -1 - tonumber(ARGV[8]))
redis.call('HSET', KEYS[1], 'last_tick', ARGV[6], 'last_invocation', ARGV[9])
redis.call('HDEL', KEYS[1], 'last_error', 'last_error_ms')
redis.call('HINCRBY', KEYS[1], 'runs', 1)
return {'fired', entry}
