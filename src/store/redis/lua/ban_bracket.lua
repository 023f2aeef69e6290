-- ban_bracket.lua: the ban's step in a bracket's slot: a marker in the bracket's meta
-- (enter.lua then never puts the player back on the board) and the player's entry
-- removed from the board (the others' ranks close up; the join counter is another
-- slot's and is not touched, so the place is not reused). The page cache goes, as on
-- every change of the board. A closed bracket never changes: nothing is written.
-- Idempotent.
--
-- KEYS[1]  bracket board (zset)
-- KEYS[2]  bracket meta (hash: "closed", "paged", "ban:<player>" markers)
-- KEYS[3]  bracket page cache
-- ARGV[1]  player id; ARGV[2] the marker; ARGV[3] seconds the meta lives at least,
--          if this creates it
--
-- Reply: "removed" | "marked" | "closed"

local meta = redis.call('HMGET', KEYS[2], 'closed', 'paged')
if meta[1] then
  return 'closed'
end
redis.call('HSET', KEYS[2], 'ban:' .. ARGV[1], ARGV[2])
if redis.call('TTL', KEYS[2]) == -1 then
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 'marked'
end
if meta[2] then
  redis.call('DEL', KEYS[3])
  redis.call('HDEL', KEYS[2], 'paged')
end
return 'removed'
