-- hook_dead_remove.lua: remove one webhook dead letter once delivered, unless its
-- record changed meanwhile (marked for replay again).
--
-- KEYS[1] the season's dead letters (hash: letter key -> JSON), KEYS[2] their index
-- by time, KEYS[3] the letter's URL's index, KEYS[4] the letters marked for replay
-- ARGV[1] the letter's key, ARGV[2] its record as read
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('SREM', KEYS[4], ARGV[1])
end
return 1
