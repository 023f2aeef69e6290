-- grant.lua: grant one reward, once: a reward already pending or claimed under the
-- same source is never written again. Keeps the player's rewards at least ttl.
--
-- KEYS[1]  player rewards (hash: source -> "p|grant" pending or "c|grant" claimed)
-- ARGV[1]  source ("period/tier/bracket"), ARGV[2] grant, ARGV[3] ttl in seconds
--
-- Reply: 1 if granted now, 0 if it already was.

local granted = redis.call('HSETNX', KEYS[1], ARGV[1], 'p|' .. ARGV[2])
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return granted
