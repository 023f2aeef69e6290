-- around.lua: the entries around one player, with the cached profiles, in one step.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- ARGV[1]  player id
-- ARGV[2]  entries above the player (the caller clamps it below 2^32)
-- ARGV[3]  entries below the player (the caller clamps it below 2^32)
--
-- Reply: nil if the player is not on the board, else
--        {total, first rank, player, score, profile or nil, ...} as standings.lua.

local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then
  return false
end
local first = rank - tonumber(ARGV[2])
if first < 0 then
  first = 0
end
local last = rank + tonumber(ARGV[3])

local total = redis.call('ZCARD', KEYS[1])
local out = {fmt(total), fmt(first)}
local flat = redis.call('ZRANGE', KEYS[1], fmt(first), fmt(last), 'WITHSCORES')
local players = {}
for i = 1, #flat, 2 do
  players[#players + 1] = flat[i]
end
-- The player is on the board, so the range holds at least them.
local profiles = redis.call('HMGET', KEYS[2], unpack(players))
for i = 1, #players do
  out[#out + 1] = players[i]
  out[#out + 1] = flat[2 * i]
  out[#out + 1] = profiles[i] or ''
end
-- One string, as standings.lua answers (see there).
return table.concat(out, '\31')
