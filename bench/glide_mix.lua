-- The script of bench/glide_bench.py's pipelined mix: small, like one of agentq's status steps.
-- KEYS[1]: a hash (the round's own counter)
-- ARGV[1]: the field to count
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return redis.call('HGET', KEYS[1], ARGV[1])
