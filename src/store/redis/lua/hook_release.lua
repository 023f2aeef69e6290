-- hook_release.lua: give up the lease of webhook delivery of one event log, if the
-- caller holds it.
--
-- KEYS[1] the lease, ARGV[1] the caller's id
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
