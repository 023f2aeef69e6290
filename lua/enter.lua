-- enter.lua: put a joined player on their bracket's board as never-scored, and
-- cache their profile beside it. Idempotent: an existing entry keeps its score.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- ARGV[1]  player id
-- ARGV[2]  profile JSON (optional)
--
-- Reply: 1

-- The never-scored packed value is 0 (see src/score.rs), stored as "0".
redis.call('ZADD', KEYS[1], 'NX', '0', ARGV[1])
if ARGV[2] then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
