-- begin_close.lua: start closing a period. From here on joins into it are refused
-- (join.lua checks "closing"), so its brackets cannot grow while they are closed.
--
-- KEYS[1]  period meta (hash: "closing", "closed" = summary)
-- KEYS[2]  period join counters (hash: tier -> players joined)
--
-- Reply: {summary or false, tier1, n1, tier2, n2, ...}

redis.call('HSET', KEYS[1], 'closing', '1')
local summary = redis.call('HGET', KEYS[1], 'closed')
local reply = {summary}
local joins = redis.call('HGETALL', KEYS[2])
for i = 1, #joins do
  reply[#reply + 1] = joins[i]
end
return reply
