-- hook_mark.lua: mark periods whose event logs webhook delivery must look at until it
-- has delivered them (src/store/events.rs, mark_periods).
--
-- KEYS[1] the season's period marks (hash: period -> mark, unix ms)
-- ARGV[1] the mark, ARGV[2..] the periods
--
-- Each period keeps the larger of its mark and ARGV[1]. Answers 1.
local mark = tonumber(ARGV[1])
for i = 2, #ARGV do
  local at = redis.call('HGET', KEYS[1], ARGV[i])
  if not at or tonumber(at) < mark then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[1])
  end
end
return 1
