-- record_outcomes.lua: record a closed bracket's outcomes once, and let every key
-- of the bracket expire after the season's retention.
--
-- The outcomes are one string (see src/store/redis/outcomes.rs for its format), set
-- only if none is there: the first recorded outcomes stay. One string, not a hash of
-- a field per player: HSET of 100 new fields into a listpack scans it once per field
-- (about 54 us of Redis for 100 players, more than half of this script's cost), where
-- SET of one value costs well under a microsecond.
--
-- KEYS[1] board, KEYS[2] cached profiles, KEYS[3] meta (hash: "closed"),
-- KEYS[4] outcomes (string), KEYS[5] the page cache, whose
-- expiry is only ever shortened here: kept pages are read without looking at the
-- board, so they must not outlive it (see open_page.lua), nor be kept any longer
-- than their own keep time.
-- (Not the lease: it keeps its own short expiry, so a process killed before
-- finish_bracket does not block the bracket for the whole retention.)
-- ARGV[1]  time to live, seconds
-- ARGV[2]  the outcomes, encoded
--
-- Reply: 1 if recorded now, 0 if it already was.

local recorded = 0
if redis.call('SET', KEYS[4], ARGV[2], 'NX') then
  recorded = 1
end
-- freeze.lua marked the bracket closed; marking it again keeps the meta there to
-- expire below, whatever came before, so finish_bracket.lua's mark never lands on a
-- meta without an expiry.
redis.call('HSETNX', KEYS[3], 'closed', '1')
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ARGV[1])
end
local left = redis.call('PTTL', KEYS[5])
if left == -1 or left > tonumber(ARGV[1]) * 1000 then
  redis.call('EXPIRE', KEYS[5], ARGV[1])
end
return recorded
