-- hook_dead_prune.lua: remove the webhook dead letters recorded before a time, up to
-- a thousand a call.
--
-- KEYS[1] the season's dead letters (hash), KEYS[2] their index by time, KEYS[3] the
-- letters marked for replay, KEYS[4..] URLs' indexes to clean too
-- ARGV[1] the time (unix ms): letters recorded before it go
--
-- Answers how many went.
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, 1000)
for _, key in ipairs(old) do
  redis.call('HDEL', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  redis.call('SREM', KEYS[3], key)
  for k = 4, #KEYS do
    redis.call('ZREM', KEYS[k], key)
  end
end
return #old
