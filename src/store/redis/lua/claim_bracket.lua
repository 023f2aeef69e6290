-- claim_bracket.lua: decide who closes a bracket. A finished bracket answers its
-- tally; otherwise the caller gets (or renews) a short lease unless another live
-- process holds it. A dead holder's lease expires and the next caller takes over.
-- Nothing closes before its time by the league clock: until then, nothing is written.
--
-- KEYS[1]  bracket meta (hash: "done" = tally)
-- KEYS[2]  bracket lease (string: owner, with a PX expiry)
-- ARGV[1]  owner, ARGV[2] lease in milliseconds
-- ARGV[3]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[4]  when the period may be closed (its end plus the allowed skew), unix ms
--
-- Reply: {"done", tally} | {"mine"} | {"busy"} | {"not_yet", ms to wait}

local tally = redis.call('HGET', KEYS[1], 'done')
if tally then
  return {'done', tally}
end
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if now < tonumber(ARGV[4]) then
  return {'not_yet', string.format('%.0f', tonumber(ARGV[4]) - now)}
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return {'busy'}
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'mine'}
