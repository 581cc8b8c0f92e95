-- uses: invocation_status, stream_trim, inbox_feed
-- Settle: park, complete or fail the lease holder's invocation, and hand the session to the next one.
-- KEYS: record, queue, lease, stream, active, settled, lease_expiries, dispatch_due, journal, parked,
--       webhook_due, webhook_outbox, app_parked, inbox_changes, status_counts
-- ARGV: token, invocation_id, status, now, status_data, maxlen, slack, max_age_ms, parked_member, fields...
--   parked_member: JSON [user, invocation_id], the invocation's member of app_parked
-- Parking while responses wait keeps the lease: the caller resumes at once ('continue').
-- The reaper's and the watchdog's entries go in the same step (global keys on one node; the user's shard on a
-- Cluster, see worker.shards), and so do the status counts and the inbox's change feed.
-- A parked invocation joins the user's and the app's parked indexes (the inbox); a final one starts its
-- retention, and one that had been answered tells the inbox feed how it ended ('settled').
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'lost'} end
if ARGV[3] == 'parked' and tonumber(redis.call('HGET', KEYS[1], 'waiting') or '0') > 0 then
  return {'continue'}
end
if ARGV[3] ~= 'parked' then
  pending_ids(KEYS[1])
  redis.call('ZREM', KEYS[5], ARGV[2])
end
count_move(KEYS[15], KEYS[1], redis.call('HGET', KEYS[1], 'status'), ARGV[3])
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'updated_at', ARGV[4])
if #ARGV > 9 then redis.call('HSET', KEYS[1], unpack(ARGV, 10)) end
notify(KEYS[1], KEYS[11], KEYS[12], ARGV[2], ARGV[3], ARGV[4], '')
redis.call('DEL', KEYS[3])
redis.call('LREM', KEYS[2], 1, ARGV[2])
status_entry(KEYS[4], ARGV[2], ARGV[5])
trim_stream(KEYS[4], KEYS[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]))
if ARGV[3] == 'parked' then
  redis.call('ZADD', KEYS[10], redis.call('HGET', KEYS[1], 'created_at'), ARGV[2])
  app_parked_add(KEYS[13], KEYS[1], ARGV[9])
  inbox_change(KEYS[14], KEYS[1], ARGV[2], 'parked')
  settled_entry(KEYS[6], ARGV[3], keep_ms(KEYS[1]))
else
  redis.call('ZREM', KEYS[10], ARGV[2])
  redis.call('ZREM', KEYS[13], ARGV[9])
  if redis.call('HEXISTS', KEYS[1], 'rseq') == 1 then inbox_change(KEYS[14], KEYS[1], ARGV[2], 'settled') end
  expire_final(KEYS[1], KEYS[6], KEYS[9], ARGV[3])
end
redis.call('ZREM', KEYS[7], ARGV[2])
redis.call('ZREM', KEYS[8], ARGV[2])
return {'ok', redis.call('LINDEX', KEYS[2], 0) or ''}
