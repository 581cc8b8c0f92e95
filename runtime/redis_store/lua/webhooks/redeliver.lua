-- uses: invocation_status
-- A dead letter goes back to the outbox, due at now_ms.
-- KEYS: due, outbox, dead, dead_entries, [record], [app_audit]
-- ARGV: id, entry_json, member, now_ms, audit, audit_member
--   record: the invocation's record, which gets the redelivery's audit entry (not when it has expired);
--   audit: that entry's JSON ('' for none); app_audit only on one node (on a Cluster it is another slot, and the
--   caller adds the member after). Every other key is in the shard of the invocation's user, as is the record.
if redis.call('HDEL', KEYS[4], ARGV[1]) == 0 then return 0 end
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then audit_append(KEYS[5], ARGV[5], KEYS[6], ARGV[6], ARGV[4] / 1000) end
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
