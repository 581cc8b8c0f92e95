-- uses: hash_pairs, fence
-- Create a session (its meta, state, and the user's listing entries).
-- KEYS: meta, state, user_state, user_sessions, session_ids, app_users, [app_state]
--   app_users: the app's user set (on a Cluster the copy in the user's shard, keys.app_users)
--   app_state: left out on a Cluster (another slot); the caller writes and reads it apart
-- ARGV: session_id, app, user, now, state_pairs...
--   state_pairs: the session's, the user's and the app's state, each as a pair count then that many pairs.
-- Returns 0 when the id is taken, else {user state, app state} (flat HGETALL replies).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
-- The fencing token (lib/fence.lua) starts at the server clock in ms, above any token a stalled holder from before
-- a deletion of a session of the same id could present; the first claim's HINCRBY then finds it in place.
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'app', ARGV[2], 'user', ARGV[3], 'version', '0',
           'last_update_time', ARGV[4], 'fence', string.format('%d', clock_ms()))
local i = hset_from(KEYS[2], 5)
i = hset_from(KEYS[3], i)
hset_from(KEYS[7], i)
redis.call('SADD', KEYS[4], ARGV[1])
-- Only when the sorted index is complete (its count matches): otherwise a listing rebuilds it from the set.
if redis.call('ZCARD', KEYS[5]) == redis.call('SCARD', KEYS[4]) - 1 then redis.call('ZADD', KEYS[5], 0, ARGV[1]) end
redis.call('SADD', KEYS[6], ARGV[3])
local app_state = {}
if KEYS[7] then app_state = redis.call('HGETALL', KEYS[7]) end
-- A new session sees app and user state written by earlier sessions too.
return {redis.call('HGETALL', KEYS[3]), app_state}
