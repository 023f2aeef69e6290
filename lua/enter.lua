-- enter.lua: put a joined player on their bracket's board as never-scored, and
-- cache their profile beside it. Idempotent: an existing entry keeps its score.
-- A closed bracket (frozen by the rollover) is refused and left unchanged.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- KEYS[3]  bracket meta (hash: field "closed" marks a closed bracket)
-- ARGV[1]  player id
-- ARGV[2]  profile JSON (optional)
--
-- Reply: "ok" | "closed"

if redis.call('HEXISTS', KEYS[3], 'closed') == 1 then
  return 'closed'
end
-- The never-scored packed value is 0 (see src/score.rs), stored as "0".
redis.call('ZADD', KEYS[1], 'NX', '0', ARGV[1])
if ARGV[2] then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 'ok'
