-- hook_dead_remove.lua: remove one webhook dead letter once delivered, unless its
-- record changed meanwhile (marked for replay again).
--
-- KEYS[1] the season's dead letters (hash: letter key -> JSON)
-- ARGV[1] the letter's key, ARGV[2] its record as read
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
