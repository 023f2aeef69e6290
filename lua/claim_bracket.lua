-- claim_bracket.lua: decide who closes a bracket. A finished bracket answers its
-- tally; otherwise the caller gets (or renews) a short lease unless another live
-- process holds it. A dead holder's lease expires and the next caller takes over.
--
-- KEYS[1]  bracket meta (hash: "done" = tally)
-- KEYS[2]  bracket lease (string: owner, with a PX expiry)
-- ARGV[1]  owner, ARGV[2] lease in milliseconds
--
-- Reply: {"done", tally} | {"mine"} | {"busy"}

local tally = redis.call('HGET', KEYS[1], 'done')
if tally then
  return {'done', tally}
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return {'busy'}
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'mine'}
