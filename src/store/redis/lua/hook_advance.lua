-- hook_advance.lua: move one webhook target's cursor of one event log forward, only
-- for the holder of the log's lease.
--
-- KEYS[1] the lease, KEYS[2] the cursor hash (target -> "ms-seq")
-- ARGV[1] the caller's id, ARGV[2] the target, ARGV[3] the new position's ms,
-- ARGV[4] its seq, ARGV[5] how long the hash lives after this (ms)
--
-- Answers 0 if the caller does not hold the lease (nothing written), else 1: the
-- cursor is set unless it is already at or past the new position (never moved back).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local ms, seq = tonumber(ARGV[3]), tonumber(ARGV[4])
local at = redis.call('HGET', KEYS[2], ARGV[2])
local later = true
if at then
  local dash = string.find(at, '-', 1, true)
  local ams, aseq = tonumber(string.sub(at, 1, dash - 1)), tonumber(string.sub(at, dash + 1))
  later = ms > ams or (ms == ams and seq > aseq)
end
if later then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. '-' .. ARGV[4])
end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
