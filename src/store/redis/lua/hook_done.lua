-- hook_done.lua: record that one webhook target has delivered every event of one
-- period's logs, as of the period's mark, unless a write marked it again since.
--
-- KEYS[1] the season's period marks, KEYS[2] the target's done periods (hash:
-- period -> mark)
-- ARGV[1] the period, ARGV[2] its mark as read, ARGV[3] how long the target's record
-- lives after this (ms)
--
-- Answers 1 if recorded, 0 if the period's mark is no longer ARGV[2] (nothing written).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
