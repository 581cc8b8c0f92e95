-- Give up the lease a rewind held (rewind_begin.lua, or enqueue_strategy.lua's rollback); the session's queue head,
-- if any, so the caller sends its run job (a job sent while the rewind held the lease was dropped).
-- KEYS: lease, queue
-- ARGV: token
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return redis.call('LINDEX', KEYS[2], 0) or ''
