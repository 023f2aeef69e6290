-- hook_lease.lua: take or renew the lease of webhook delivery of one event log.
--
-- KEYS[1] the lease (string: its holder's id, with a time to live)
-- ARGV[1] the caller's id, ARGV[2] the time to live (ms)
--
-- Answers 1 if the caller holds the lease now (taken, or renewed because it held
-- it), 0 if another holder does.
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
