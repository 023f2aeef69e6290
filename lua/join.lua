-- join.lua: place a player in a bracket of their tier for one period, once.
--
-- The check, the counter increment and the assignment run as one atomic step, so
-- two concurrent joins of one player can never give them two brackets, and the
-- per-(period, tier) counter never counts a player twice.
--
-- KEYS[1]  period assign hash: player -> "tier:bracket"
-- KEYS[2]  period joins hash:  tier -> players joined so far (the bracket counter)
-- KEYS[3]  period meta hash:   field "closing" refuses new joins
-- ARGV[1]  player id
-- ARGV[2]  tier name (never contains ':', so the assignment splits on the last ':')
-- ARGV[3]  bracket size (>= 1)
--
-- Reply (all strings): {"closed"} | {"existing", tier, bracket} | {"new", tier, bracket}
--                      | {"malformed", what}

if redis.call('HEXISTS', KEYS[3], 'closing') == 1 then
  return {'closed'}
end

local placed = redis.call('HGET', KEYS[1], ARGV[1])
if placed then
  local tier, bracket = string.match(placed, '^(.*):(%d+)$')
  if not tier then
    return {'malformed', 'assignment ' .. placed .. ' of ' .. KEYS[1]}
  end
  return {'existing', tier, bracket}
end

local n = redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
local size = tonumber(ARGV[3])
-- ceil(n / size) with integers well below 2^53, so the division is exact enough
-- for floor to be right.
local bracket = string.format('%.0f', math.floor((n + size - 1) / size))
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. bracket)
return {'new', ARGV[2], bracket}
