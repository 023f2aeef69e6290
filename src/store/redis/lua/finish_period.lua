-- finish_period.lua: mark a period closed with its summary (the first summary
-- stays), and let its keys expire after the season's retention.
--
-- KEYS[1]  period meta, KEYS[2] join counters, KEYS[3..] every assign bucket
-- ARGV[1]  summary (JSON)
-- ARGV[2]  time to live, seconds
-- ARGV[3], ARGV[4..]  with a season's `[events]` only: the event log's spec and the
--          events of the close (period.closed), appended only by the call that marks
--          the period closed; the log is then the last key, and keeps its own expiry
--
-- Reply: 1

local logged = ARGV[3] ~= nil
local keys = #KEYS
if logged then
  keys = keys - 1
end
local closed = redis.call('HSETNX', KEYS[1], 'closed', ARGV[1])
for i = 1, keys do
  redis.call('EXPIRE', KEYS[i], ARGV[2])
end
if logged and closed == 1 then
  append_events(#KEYS, ARGV[3], {unpack(ARGV, 4)})
end
return 1
