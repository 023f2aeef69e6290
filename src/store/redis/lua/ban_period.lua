-- ban_period.lua: the ban's step in a period's slot. A player placed in the period is
-- answered with their placement (the ban then takes them off that bracket's board, see
-- ban_bracket.lua); an unplaced one gets a marker in the period's meta that join.lua
-- checks, so no join placed after this step can put them on a board. A closing period
-- takes no joins any more: nothing is written. Idempotent.
--
-- KEYS[1]  the period's meta (hash: "closing"; "ban:<player>" markers)
-- KEYS[2]  the player's assign bucket of the period (hash: player -> "tier:bracket")
-- ARGV[1]  player id; ARGV[2] the marker ("since|until", ms; until "" for none);
-- ARGV[3]  seconds the period's meta lives at least, if this creates it
--
-- Reply: "placed:tier:bracket" | "marked" | "closing"

local placed = redis.call('HGET', KEYS[2], ARGV[1])
if placed then
  return 'placed:' .. placed
end
if redis.call('HEXISTS', KEYS[1], 'closing') == 1 then
  return 'closing'
end
redis.call('HSET', KEYS[1], 'ban:' .. ARGV[1], ARGV[2])
if redis.call('TTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return 'marked'
