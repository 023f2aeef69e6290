-- hook_register.lua: record that a webhook target is delivered to now, and answer
-- when it was first seen.
--
-- KEYS[1] the season's targets (hash: target -> "<first seen> <last seen>", unix ms)
-- ARGV[1] the target, ARGV[2] now, ARGV[3] how long after it was last seen a target
-- starts anew (ms)
--
-- Answers the first time it was seen: now if never, or if last seen longer ago than
-- ARGV[3].
local now = tonumber(ARGV[2])
local first = now
local seen = redis.call('HGET', KEYS[1], ARGV[1])
if seen then
  local f, l = string.match(seen, '^(%d+) (%d+)$')
  if f and now - tonumber(l) <= tonumber(ARGV[3]) then
    first = tonumber(f)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d %d', first, now))
return first
