-- standings.lua: one page of a bracket board with the cached profiles, in one step.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- ARGV[1]  first 0-based rank
-- ARGV[2]  last 0-based rank (inclusive)
-- ARGV[3]  "1" to read the range, "0" for the count only (a page of zero entries)
--
-- Reply: {total, first rank, player, score, profile or nil, player, score, ...}
-- Scores are the raw zset scores (minus the packed value); the caller parses them.
-- Ranks pass through as the strings the caller formatted, never as Lua numbers.

local total = redis.call('ZCARD', KEYS[1])
local out = {string.format('%.0f', total), ARGV[1]}
if ARGV[3] ~= '1' then
  return out
end

local flat = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #flat == 0 then
  return out
end

local players = {}
for i = 1, #flat, 2 do
  players[#players + 1] = flat[i]
end
local profiles = redis.call('HMGET', KEYS[2], unpack(players))
for i = 1, #players do
  out[#out + 1] = players[i]
  out[#out + 1] = flat[2 * i]
  out[#out + 1] = profiles[i]
end
return out
