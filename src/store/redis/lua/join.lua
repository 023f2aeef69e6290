-- join.lua: place a player in a bracket of their tier for one period, once.
--
-- The time rules, the check, the counter increment and the assignment run as one
-- atomic step, so two concurrent joins of one player can never give them two
-- brackets, the per-(period, tier) counter never counts a player twice, and no join
-- lands in a period the league clock has not opened or has closed.
--
-- KEYS[1]  the player's assign bucket of the period (hash: player -> "tier:bracket";
--          one of 16,384 in the period's slot, see src/store/keys.rs)
-- KEYS[2]  period joins hash:  tier -> players joined so far (the bracket counter)
-- KEYS[3]  period meta hash:   field "closing" refuses new joins
-- ARGV[1]  player id
-- ARGV[2]  tier name (never contains ':', so the assignment splits on the last ':')
-- ARGV[3]  bracket size (>= 1)
-- ARGV[4]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[5]  the join's time, ARGV[6] its period's start, ARGV[7] when the period stops
--          accepting events (end + skew), ARGV[8] the allowed skew (all ms)
-- ARGV[9]  "" or a bracket the player is assigned to but that was found full (the
--          server lost data under running game servers): assign the player anew,
--          past it, in the tier they were placed in
-- ARGV[10] seconds the period's keys live at least (a period the rollover never
--          reaches still expires; finish_period.lua sets the closed period's TTL)
--
-- Reply (all strings): {"new" | "existing", tier, bracket} | {"closed"}
--                      | {"future", ms ahead, now} | {"not_yet", ms to wait}
--                      | {"malformed", what}

local function fmt(x)
  return string.format('%.0f', x)
end

local now
if ARGV[4] ~= '' then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local at = tonumber(ARGV[5])
if at > now + tonumber(ARGV[8]) then
  return {'future', fmt(at - now), fmt(now)}
end
if now < tonumber(ARGV[6]) then
  return {'not_yet', fmt(tonumber(ARGV[6]) - now)}
end
if now >= tonumber(ARGV[7]) then
  return {'closed'}
end
if redis.call('HEXISTS', KEYS[3], 'closing') == 1 then
  return {'closed'}
end

local size = tonumber(ARGV[3])
local tier = ARGV[2]
local placed = redis.call('HGET', KEYS[1], ARGV[1])
if placed then
  local was, bracket = string.match(placed, '^(.*):(%d+)$')
  if not was then
    return {'malformed', 'assignment ' .. placed .. ' of ' .. KEYS[1]}
  end
  if ARGV[9] == '' or bracket ~= ARGV[9] then
    return {'existing', was, bracket}
  end
  -- Move the tier's counter past the full bracket, so this player and every later
  -- joiner land after it.
  tier = was
  local past = tonumber(bracket) * size
  local n = tonumber(redis.call('HGET', KEYS[2], tier) or '0')
  if n < past then
    redis.call('HSET', KEYS[2], tier, fmt(past))
  end
end

local n = redis.call('HINCRBY', KEYS[2], tier, 1)
-- ceil(n / size) with integers well below 2^53, so the division is exact enough
-- for floor to be right.
local bracket = fmt(math.floor((n + size - 1) / size))
redis.call('HSET', KEYS[1], ARGV[1], tier .. ':' .. bracket)
for i = 1, 2 do
  if redis.call('TTL', KEYS[i]) == -1 then
    redis.call('EXPIRE', KEYS[i], ARGV[10])
  end
end
return {'new', tier, bracket}
