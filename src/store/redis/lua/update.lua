-- update.lua: apply one score update to a bracket board, with the idempotency
-- check and record and the league clock's rules in the same atomic step.
--
-- This is `Packing::apply` (src/season/packing.rs) in Lua and must stay exactly equal to it;
-- the conformance suite runs the same scenarios on both stores.
--
-- Numbers: Lua 5.1 numbers are doubles. Every packed value is an integer at most
-- 2^53 - 1, so it is held exactly, but two things need care:
--   * the remainder is computed as p - q * span and checked, not trusted: with
--     (max_score + 1) * span <= 2^53, p / span cannot round up to the next integer,
--     but the check costs nothing and keeps a rounding surprise from going unseen;
--   * tostring() and implicit number-to-string conversion use "%.14g", which
--     loses digits above 1e14, so every number sent to Redis or returned goes
--     through fmt() ("%.0f", exact for integers).
-- Times are unix milliseconds (about 1.8e12), exact as doubles.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket meta (hash: field "closed" marks a closed bracket, "paged" that
--          the page cache may hold pages)
-- KEYS[3]  bracket page cache (see standings.lua): deleted when the board changes
-- KEYS[4]  idempotency key of (player, request id) (absent when there is none)
-- ARGV[1]  player id
-- ARGV[2]  mode: increment | best | set
-- ARGV[3]  value (integer; the caller clamps it to +-2^53, which changes no outcome)
-- ARGV[4]  tick (the caller clamps it to span - 2, as Packing::apply does)
-- ARGV[5]  max_score; -1 means no score is in range (the caller found the packing
--          parameters invalid, where the in-memory store refuses every update)
-- ARGV[6]  span (T)
-- ARGV[7]  idempotency window in seconds (0: do not remember the request)
-- ARGV[8]  attempt token: identifies this call across client-side retries
-- ARGV[9]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[10] the event's time, ARGV[11] its period's start, ARGV[12] when the period
--          stops accepting events (end + skew), ARGV[13] the allowed skew (all ms)
--
-- Reply (all strings):
--   {"duplicate", packed, rank, token}   the first answer to this request id
--   {"future", ms ahead, now}            the event is beyond now + skew
--   {"not_yet", ms to wait}              the period has not started
--   {"closed", "0", "0"}                 the bracket or period is closed
--   {"not_placed"}                       the player is not on this board
--   {"out_of_range", current packed, "0"}
--   {"applied", packed, rank}
--   {"malformed", what}                  data this script did not write

local function fmt(x)
  return string.format('%.0f', x)
end

-- The board stores minus the packed value; write 0 as "0", never "-0".
local function neg(x)
  if x == 0 then
    return '0'
  end
  return fmt(-x)
end

-- The idempotency record first: a retry is answered as the first time was, even
-- once the period has closed.
local rq = KEYS[4]
if rq then
  local seen = redis.call('GET', rq)
  if seen then
    local packed, rank, token = string.match(seen, '^(%d+):(%d+):?(.*)$')
    if not packed then
      return {'malformed', 'idempotency record ' .. seen .. ' at ' .. rq}
    end
    return {'duplicate', packed, rank, token}
  end
end

local now
if ARGV[9] ~= '' then
  now = tonumber(ARGV[9])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local at = tonumber(ARGV[10])
if at > now + tonumber(ARGV[13]) then
  return {'future', fmt(at - now), fmt(now)}
end
local start = tonumber(ARGV[11])
if now < start then
  return {'not_yet', fmt(start - now)}
end
if now >= tonumber(ARGV[12]) then
  return {'closed', '0', '0'}
end

local meta = redis.call('HMGET', KEYS[2], 'closed', 'paged')
if meta[1] then
  return {'closed', '0', '0'}
end

local player = ARGV[1]
local mode = ARGV[2]
local value = tonumber(ARGV[3])
local tick = tonumber(ARGV[4])
local max = tonumber(ARGV[5])
local span = tonumber(ARGV[6])

-- Only a join puts a player on a board: an update for a player who is not there
-- comes from a stale placement (or a server that lost its data), and must not grow
-- the board past its size or create a board the rollover never finds.
local raw = redis.call('ZSCORE', KEYS[1], player)
if not raw then
  return {'not_placed'}
end
-- 0 - x rather than -x, so a stored 0 gives +0.
local packed = 0 - tonumber(raw)
if packed ~= packed or packed < 0 or packed > 9007199254740992
    or packed ~= math.floor(packed) then
  return {'malformed', 'score ' .. raw .. ' of ' .. player .. ' in ' .. KEYS[1]}
end

if max < 0 then
  return {'out_of_range', fmt(packed), '0'}
end

-- unpack: score = floor(packed / span), rev = packed mod span (exactly).
local score = math.floor(packed / span)
local rev = packed - score * span
if rev < 0 then
  score = score - 1
  rev = rev + span
elseif rev >= span then
  score = score + 1
  rev = rev - span
end

local result
if mode == 'increment' then
  result = score + value
elseif mode == 'best' then
  if value < 0 or value > max then
    result = value
  elseif value > score then
    result = value
  else
    result = score
  end
elseif mode == 'set' then
  result = value
else
  return {'malformed', 'unknown score mode ' .. mode}
end

if result < 0 or result > max then
  return {'out_of_range', fmt(packed), '0'}
end

if tick > span - 2 then
  tick = span - 2
end

-- An unchanged score keeps the time it was reached; a never-scored entry (rev 0)
-- takes the event's time even when its score stays 0.
local newrev
if result == score and rev ~= 0 then
  newrev = rev
else
  newrev = span - 1 - tick
end
local newpacked = result * span + newrev

redis.call('ZADD', KEYS[1], neg(newpacked), player)
if newpacked ~= packed and meta[2] then
  redis.call('DEL', KEYS[3])
  redis.call('HDEL', KEYS[2], 'paged')
end
local rank = redis.call('ZRANK', KEYS[1], player)

local out_packed = fmt(newpacked)
local out_rank = fmt(rank)
if rq and ARGV[7] ~= '0' then
  redis.call('SET', rq, out_packed .. ':' .. out_rank .. ':' .. ARGV[8], 'EX', ARGV[7], 'NX')
end
return {'applied', out_packed, out_rank}
