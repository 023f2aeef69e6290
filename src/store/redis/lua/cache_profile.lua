-- cache_profile.lua: refresh the cached profile copy in a bracket, but only for a
-- player who is on that bracket's board (so a stale bracket never gains an entry),
-- and only with a newer version (so concurrent edits settle on the newest).
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> "version json")
-- KEYS[3]  bracket page cache (see standings.lua): deleted when a profile changes
-- KEYS[4]  the bracket's profiles as one string (see open_page.lua): deleted when a
--          profile changes, with the claim on it
-- KEYS[5]  bracket meta (hash: "texted", the claim on the profiles' string)
-- ARGV[1]  player id
-- ARGV[2]  the profile's version
-- ARGV[3]  the whole profile as JSON
--
-- Reply: 1 if the cache was written, else 0.

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local cached = redis.call('HGET', KEYS[2], ARGV[1])
local version = cached and tonumber(string.match(cached, '^(%d+) '))
if version and version >= tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], 'texted')
return 1
