-- finish_period.lua: mark a period closed with its summary (the first summary
-- stays), and let its keys expire after the season's retention.
--
-- KEYS[1]  period meta, KEYS[2] join counters, KEYS[3..] every assign bucket
-- ARGV[1]  summary (JSON)
-- ARGV[2]  time to live, seconds
--
-- Reply: 1

redis.call('HSETNX', KEYS[1], 'closed', ARGV[1])
for i = 1, #KEYS do
  redis.call('EXPIRE', KEYS[i], ARGV[2])
end
return 1
