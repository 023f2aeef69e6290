-- entry.lua: a player's rank and score on a board, read in one atomic step (a
-- pipeline of ZRANK and ZSCORE could straddle another client's update).
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- ARGV[1]  player id
--
-- Reply: nil if the player is not on the board, else {rank, raw score}.

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return false
end
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
return {string.format('%.0f', rank), score}
