-- cache_profile.lua: refresh the cached profile copy in a bracket, but only for a
-- player who is on that bracket's board (so a stale bracket never gains an entry).
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- ARGV[1]  player id
-- ARGV[2]  the whole profile as JSON
--
-- Reply: 1 if the cache was written, else 0.

if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
return 0
