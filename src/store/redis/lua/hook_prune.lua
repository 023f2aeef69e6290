-- hook_prune.lua: forget the period marks older than a time (their logs have expired),
-- and those periods in the given targets' done records.
--
-- KEYS[1] the season's period marks, KEYS[2..] targets' done periods
-- ARGV[1] the time (unix ms): marks below it go
--
-- Answers how many marks went.
local before = tonumber(ARGV[1])
local all = redis.call('HGETALL', KEYS[1])
local gone = 0
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < before then
    redis.call('HDEL', KEYS[1], all[i])
    for k = 2, #KEYS do
      redis.call('HDEL', KEYS[k], all[i])
    end
    gone = gone + 1
  end
end
return gone
