-- uses: stream_trim
-- Add one entry to a session stream, trimming it as commits do.
-- KEYS: stream, active
-- ARGV: kind, invocation_id, data, maxlen, slack, max_age_ms
local entry = redis.call('XADD', KEYS[1], '*', 'kind', ARGV[1], 'inv', ARGV[2], 'data', ARGV[3])
trim_stream(KEYS[1], KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
return entry
