-- raise_mark.lua: raise the season's closed-through mark, never lower it, so
-- concurrent rollovers converge on the highest period closed. The key layout that
-- wrote the mark goes with it (kept if present): after Redis lost its data under
-- running processes, the meta they write again still says which layout it is in, so
-- processes started later read it as theirs (see check_layout in rollover/edits.rs).
--
-- KEYS[1]  season meta (hash: fields "closed_through" and "season:layout")
-- ARGV[1]  period id
-- ARGV[2]  the key layout of this version
--
-- Reply: the mark after the call, as a string.

redis.call('HSETNX', KEYS[1], 'season:layout', ARGV[2])
local current = tonumber(redis.call('HGET', KEYS[1], 'closed_through') or '0')
local new = tonumber(ARGV[1])
if new > current then
  redis.call('HSET', KEYS[1], 'closed_through', ARGV[1])
  return ARGV[1]
end
return string.format('%.0f', current)
