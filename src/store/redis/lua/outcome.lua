-- outcome.lua: one player's outcome out of a closed bracket's recorded outcomes,
-- without sending the whole record (about 30 bytes of a few kilobytes).
--
-- KEYS[1]  the bracket's outcomes (string; see src/store/redis/outcomes.rs)
-- ARGV[1]  what starts the player's entry: byte 30, the escaped player id, byte 31
--
-- Reply: the player's escaped outcome, or nil if the bracket has no outcomes or none
-- for this player. Escaped text holds neither byte 30 nor byte 31, so the first
-- byte 31 after a byte 30 ends a player id and the needle matches one entry only.

local all = redis.call('GET', KEYS[1])
if not all then
  return false
end
local _, last = string.find(all, ARGV[1], 1, true)
if not last then
  return false
end
local stop = string.find(all, '\30', last + 1, true)
if stop then
  return string.sub(all, last + 1, stop - 1)
end
return string.sub(all, last + 1)
