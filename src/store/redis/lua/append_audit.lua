-- append_audit.lua: append one entry to the season's audit log, unless it is there,
-- and drop the entries older than the retention, in one step.
--
-- KEYS[1] the audit log (zset: entry -> unix ms)
-- ARGV[1] the entry's time (unix ms), ARGV[2] the entry (unique by its text),
-- ARGV[3] the oldest time kept (unix ms)
--
-- ZADD NX: an entry appended again (a retry after a lost answer) keeps its first
-- time and place.
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
return 1
