-- uses: enqueue_step
-- Queue an invocation on its session (lib/enqueue_step.lua).
-- KEYS: session_meta, record, queue, user_invocations, stream, active, status_counts
-- ARGV: invocation_id, created_at, status_data, fields...
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local length, entry = enqueue_step({record = KEYS[2], queue = KEYS[3], user_invocations = KEYS[4], stream = KEYS[5],
                                    active = KEYS[6], status_counts = KEYS[7]}, ARGV[1], ARGV[2], ARGV[3], 4)
return {length, entry}
