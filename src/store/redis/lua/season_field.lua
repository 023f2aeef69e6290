-- season_field.lua: write one field of the season's meta, with the key layout that
-- wrote it (kept if present), as raise_mark.lua does: a meta written again after
-- Redis lost its data still says which layout it is in.
--
-- KEYS[1]  season meta (hash)
-- ARGV[1]  the field ("season:NAME")
-- ARGV[2]  its value
-- ARGV[3]  "1": keep a value already there; "0": replace it
-- ARGV[4]  the key layout of this version
--
-- Reply: 1.

if ARGV[3] == '1' then
  redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('HSETNX', KEYS[1], 'season:layout', ARGV[4])
return 1
