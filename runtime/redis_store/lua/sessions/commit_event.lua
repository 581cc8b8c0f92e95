-- uses: stream_trim, hash_pairs, fence, time_index
-- Commit one event to a session: the one script every event of every invocation is committed by. It checks
-- the fence and the version, appends the event, applies its state delta by scope, bumps the version and XADDs
-- the event to the session stream, in one step.
-- KEYS: meta, state, user_state, events, times, stream, fence_meta, fence, active, [app_state]
--   fence_meta: the meta hash whose 'fence' field holds the token (the session's own, or for an AgentTool's
--   child session its parent's); fence: that session's legacy fence key (lib/fence.lua)
-- ARGV: expected_version, fence_token, event_json, timestamp, invocation_id, maxlen, slack, max_age_ms,
--       state_pairs...
--   expected_version: '' = whatever it is now; fence_token: '' = unchecked;
--   state_pairs: the session's, the user's and the app's delta, each as a pair count then that many pairs
local meta = redis.call('HMGET', KEYS[1], 'version', 'max_ts', 'fence')
if not meta[1] then return {'missing'} end
if ARGV[2] ~= '' then
  local field = meta[3]
  if KEYS[7] ~= KEYS[1] then field = redis.call('HGET', KEYS[7], 'fence') end
  local held = fence_held(field, KEYS[8])
  if held ~= ARGV[2] then return {'fenced', held or ''} end
end
if ARGV[1] ~= '' and meta[1] ~= ARGV[1] then
  -- A client retrying a commit whose reply it lost finds its own event on top: report success, add nothing.
  if tonumber(meta[1]) == tonumber(ARGV[1]) + 1 and redis.call('LINDEX', KEYS[4], -1) == ARGV[3] then
    return {'ok', tonumber(meta[1]), ''}
  end
  return {'stale', meta[1]}
end
local n = redis.call('RPUSH', KEYS[4], ARGV[3])
-- The running maximum of timestamps (max_ts): the score of the time index's sparse checkpoints (lib/time_index.lua).
local score = ARGV[4]
if meta[2] and tonumber(meta[2]) > tonumber(score) then score = meta[2] end
time_index_add(KEYS[5], n - 1, score)
local i = hset_from(KEYS[2], 9)
i = hset_from(KEYS[3], i)
hset_from(KEYS[10], i)
local new_version = tonumber(meta[1]) + 1
redis.call('HSET', KEYS[1], 'version', tostring(new_version), 'last_update_time', ARGV[4], 'max_ts', score)
local entry = redis.call('XADD', KEYS[6], '*', 'kind', 'event', 'inv', ARGV[5], 'data', ARGV[3])
-- Trimming by length is batched (slack): looking at the length (XLEN) on every commit would cost a command per
-- event for a check that acts once in ``slack`` entries, so a commit looks every trim_every(slack) versions (on
-- every one for a stream kept short). Trimming by age, and the settle's look once per invocation, are unchanged.
local slack, max_age_ms = tonumber(ARGV[7]), tonumber(ARGV[8])
if max_age_ms > 0 or new_version % trim_every(slack) == 0 then
  trim_stream(KEYS[6], KEYS[9], tonumber(ARGV[6]), slack, max_age_ms)
end
return {'ok', new_version, entry}
