-- move_clock.lua: move the staging clock's offset forward, from the value the caller
-- read to a larger one, in one step; never lower it. A retry after a lost answer finds
-- the offset already moved and changes nothing. The key layout goes with it (kept if
-- present), as raise_mark.lua does.
--
-- KEYS[1]  season meta (hash: field "clock_offset", ms, absent = 0)
-- ARGV[1]  the offset the caller read (ms)
-- ARGV[2]  the new offset (ms), larger
-- ARGV[3]  the key layout of this version
--
-- Reply: the offset after the call, as a string (ARGV[2] when it moved).

local current = tonumber(redis.call('HGET', KEYS[1], 'clock_offset') or '0')
local from, to = tonumber(ARGV[1]), tonumber(ARGV[2])
if current == from and to > from then
  redis.call('HSET', KEYS[1], 'clock_offset', ARGV[2])
  redis.call('HSETNX', KEYS[1], 'season:layout', ARGV[3])
  return ARGV[2]
end
return string.format('%.0f', current)
