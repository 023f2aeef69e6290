-- finish_bracket.lua: mark a bracket done (outcomes recorded, rewards granted)
-- with its tally, and release the lease.
--
-- KEYS[1]  bracket meta (hash: "done" = tally)
-- KEYS[2]  bracket lease
-- ARGV[1]  tally
--
-- Reply: 1

redis.call('HSETNX', KEYS[1], 'done', ARGV[1])
redis.call('DEL', KEYS[2])
return 1
