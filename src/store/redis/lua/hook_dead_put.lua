-- hook_dead_put.lua: record (or replace) one webhook dead letter and keep its URL's
-- letters within their bounds.
--
-- KEYS[1] the season's dead letters (hash: letter key -> JSON), KEYS[2] their index
-- by time (zset: key -> unix ms), KEYS[3] the letter's URL's index (zset), KEYS[4]
-- the letters marked for replay (set)
-- ARGV[1] the letter's key, ARGV[2] its JSON, ARGV[3] when it was recorded (unix ms),
-- ARGV[4] "1" if marked for replay, ARGV[5] the most letters kept per URL, ARGV[6]
-- letters of the URL recorded before this time (unix ms) go
--
-- Answers how many of the URL's oldest letters went for the cap.
local function drop(key)
  redis.call('HDEL', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  redis.call('ZREM', KEYS[3], key)
  redis.call('SREM', KEYS[4], key)
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[4], ARGV[1])
else
  redis.call('SREM', KEYS[4], ARGV[1])
end
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[6], 'LIMIT', 0, 1000)) do
  drop(key)
end
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
local dropped = 0
if over > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[3], 0, over - 1)) do
    drop(key)
    dropped = dropped + 1
  end
end
return dropped
