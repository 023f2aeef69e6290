-- enter.lua: put a joined player on their bracket's board as never-scored, and
-- cache their profile beside it. Idempotent: an existing entry keeps its score.
-- A closed bracket (frozen by the rollover) is refused and left unchanged, and so is
-- a full one (possible only after the server lost the period's join counters while
-- this board survived): no board ever holds more than the bracket size.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> "version json")
-- KEYS[3]  bracket meta (hash: field "closed" marks a closed bracket, "paged" that
--          the page cache may hold pages)
-- KEYS[4]  bracket page cache (see standings.lua): deleted when the board or the
--          profile cache changes
-- ARGV[1]  player id
-- ARGV[2]  bracket size
-- ARGV[3]  seconds the board lives at least (so a board the rollover never reaches
--          still expires)
-- ARGV[4]  profile version, ARGV[5] profile JSON (both optional)
--
-- Reply: "ok" | "closed" | "full"

local meta = redis.call('HMGET', KEYS[3], 'closed', 'paged')
if meta[1] then
  return 'closed'
end
local changed = false
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
    return 'full'
  end
  -- The never-scored packed value is 0 (see src/season/packing.rs), stored as "0".
  redis.call('ZADD', KEYS[1], '0', ARGV[1])
  changed = true
end
if ARGV[4] then
  local cached = redis.call('HGET', KEYS[2], ARGV[1])
  local version = cached and tonumber(string.match(cached, '^(%d+) '))
  if not version or version < tonumber(ARGV[4]) then
    redis.call('HSET', KEYS[2], ARGV[1], ARGV[4] .. ' ' .. ARGV[5])
    changed = true
  end
end
for i = 1, 2 do
  if redis.call('TTL', KEYS[i]) == -1 then
    redis.call('EXPIRE', KEYS[i], ARGV[3])
  end
end
if changed and meta[2] then
  redis.call('DEL', KEYS[4])
  redis.call('HDEL', KEYS[3], 'paged')
end
return 'ok'
