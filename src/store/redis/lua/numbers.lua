-- numbers.lua: how a script prints a number it sends to Redis or answers, and reads
-- a board's packed score.
-- Included by: adjust, around, join, update (assembled in front of them by
-- src/store/redis/scripts.rs).
--
-- Lua 5.1 numbers are doubles; tostring() and implicit number-to-string conversion
-- use "%.14g", which loses digits above 1e14. fmt(x) prints an integer with "%d",
-- which Redis's Lua 5.1 prints from a C long (64 bits): exact for every integer up to
-- 2^63, and it never goes through the printing of doubles ("%.0f" is exact too, but
-- its bignum arithmetic was 4% of an update's instructions under callgrind). Only
-- integers are ever given to it.
local function fmt(x)
  return string.format('%d', x)
end

-- board_packed(raw): the packed value of a board entry's stored score `raw` (a board
-- keeps minus the packed value; 0 - x rather than -x, so a stored 0 gives +0), or nil
-- when it is not one leaguekit wrote: not an integer in 0..2^53.
local function board_packed(raw)
  local packed = 0 - tonumber(raw)
  if packed ~= packed or packed < 0 or packed > 9007199254740992
      or packed ~= math.floor(packed) then
    return nil
  end
  return packed
end

-- split_packed(packed, span): the score, floor(packed / span), and the time part,
-- packed mod span, exactly. With (max_score + 1) * span <= 2^53, packed / span cannot
-- round up to the next integer, but the remainder is computed as p - q * span and
-- corrected rather than trusted: the check costs nothing and keeps a rounding
-- surprise from going unseen.
local function split_packed(packed, span)
  local score = math.floor(packed / span)
  local rev = packed - score * span
  if rev < 0 then
    score = score - 1
    rev = rev + span
  elseif rev >= span then
    score = score + 1
    rev = rev - span
  end
  return score, rev
end
