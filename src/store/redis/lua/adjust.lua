-- adjust.lua: an operator's exact change of one player's score on their bracket's
-- board, with an update's time and closed checks, in one atomic step.
--
-- This is `Packing::adjust` (src/season/packing.rs) in Lua and must stay exactly
-- equal to it: the score changes by or to the given number, and keeps the time its
-- current score was reached (rev), except a never-scored entry (rev 0), which takes
-- the adjustment's tick. Numbers stay exact as in update.lua (see there).
--
-- KEYS[1] bracket board, KEYS[2] bracket meta, KEYS[3] bracket page cache
-- ARGV[1] player; ARGV[2] "by" | "set"; ARGV[3] the number; ARGV[4] max_score;
-- ARGV[5] span; ARGV[6] the adjustment's tick; ARGV[7] the league clock ("" for
-- TIME); ARGV[8] the period's start, ARGV[9] when it stops accepting events (ms);
-- ARGV[10] the call's attempt token: the answer is kept in the meta hash under
-- "adj:<token>", so that a resend of the call is answered as the first and changes
-- nothing again.
-- KEYS[4], ARGV[11], ARGV[12]  with a season's `[events]` only: the bracket's event
-- log, its spec and the score.adjusted event's head (up to its "data":), appended
-- with the scores before and after when the adjustment applies (events.lua)
--
-- Reply: {"adjusted", before, after} (packed values), {"out_of_range", current},
-- {"not_placed"}, {"closed"}, {"not_yet", ms to wait}, {"malformed", what}.

local player = ARGV[1]
local mark = 'adj:' .. ARGV[10]
local seen = redis.call('HGET', KEYS[2], mark)
if seen then
  local before, after = string.match(seen, '^(%d+):(%d+)$')
  if not before then
    return {'malformed', 'adjustment record ' .. seen .. ' in ' .. KEYS[2]}
  end
  return {'adjusted', before, after}
end

local now = clock_ms(ARGV[7])
local start = tonumber(ARGV[8])
if now < start then
  return {'not_yet', fmt(start - now)}
end
if now >= tonumber(ARGV[9]) or redis.call('HEXISTS', KEYS[2], 'closed') == 1 then
  return {'closed'}
end

local raw = redis.call('ZSCORE', KEYS[1], player)
if not raw then
  return {'not_placed'}
end
local packed = board_packed(raw)
if not packed then
  return {'malformed', 'score ' .. raw .. ' of ' .. player .. ' in ' .. KEYS[1]}
end

local span = tonumber(ARGV[5])
local score, rev = split_packed(packed, span)

local n = tonumber(ARGV[3])
local result
if ARGV[2] == 'by' then
  result = score + n
else
  result = n
end
if result < 0 or result > tonumber(ARGV[4]) then
  return {'out_of_range', fmt(packed)}
end
if rev == 0 then
  local tick = tonumber(ARGV[6])
  if tick > span - 2 then
    tick = span - 2
  end
  rev = span - 1 - tick
end
local newpacked = result * span + rev

redis.call('ZADD', KEYS[1], newpacked == 0 and '0' or '-' .. fmt(newpacked), player)
if newpacked ~= packed and redis.call('HEXISTS', KEYS[2], 'paged') == 1 then
  redis.call('DEL', KEYS[3])
  redis.call('HDEL', KEYS[2], 'paged')
end
-- The answer, for a resend; a meta created here takes the board's expiry
-- (page_expiry.lua).
redis.call('HSET', KEYS[2], mark, fmt(packed) .. ':' .. fmt(newpacked))
if KEYS[4] then
  append_events(4, ARGV[11],
    {ARGV[12] .. '{"before":' .. fmt(score) .. ',"after":' .. fmt(result) .. '}}'})
end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then
  keep_new(2, 1, left, left + 1)
end
return {'adjusted', fmt(packed), fmt(newpacked)}
