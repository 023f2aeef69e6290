-- raise_mark.lua: raise the season's closed-through mark, never lower it, so
-- concurrent rollovers converge on the highest period closed.
--
-- KEYS[1]  season meta (hash: field "closed_through")
-- ARGV[1]  period id
--
-- Reply: the mark after the call, as a string.

local current = tonumber(redis.call('HGET', KEYS[1], 'closed_through') or '0')
local new = tonumber(ARGV[1])
if new > current then
  redis.call('HSET', KEYS[1], 'closed_through', ARGV[1])
  return ARGV[1]
end
return string.format('%.0f', current)
