-- begin_close.lua: start closing a period. From here on joins into it are refused
-- (join.lua checks "closing"), so its brackets cannot grow while they are closed.
-- Nothing closes before its time by the league clock: until then, nothing is written.
--
-- KEYS[1]  period meta (hash: "closing", "closed" = summary)
-- KEYS[2]  period join counters (hash: tier -> players joined)
-- ARGV[1]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[2]  when the period may be closed (its end plus the allowed skew), unix ms
-- ARGV[3]  seconds the meta lives at least if it has no expiry yet (a period nobody
--          joined has no keys before its close; 0: none)
--
-- Reply: {"ok", summary or false, tier1, n1, tier2, n2, ...} | {"not_yet", ms to wait}

local wait = too_soon(ARGV[1], ARGV[2])
if wait then
  return wait
end
redis.call('HSET', KEYS[1], 'closing', '1')
if tonumber(ARGV[3]) > 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[3], 'NX')
end
local summary = redis.call('HGET', KEYS[1], 'closed')
local reply = {'ok', summary}
local joins = redis.call('HGETALL', KEYS[2])
for i = 1, #joins do
  reply[#reply + 1] = joins[i]
end
return reply
