-- claim_rewards.lua: claim every pending reward of a player atomically. With a
-- claim id, the answer is stored, and a repeated claim with that id returns it
-- again and claims nothing new.
--
-- KEYS[1]  rewards (hash: source -> "p|grant" pending or "c|grant" claimed)
-- KEYS[2]  claims (hash: claim id -> the answer, cjson-encoded)
-- ARGV[1]  "1" if a claim id is given, else "0"
-- ARGV[2]  the claim id (any string, "" included; ignored when ARGV[1] is "0")
--
-- Reply: {source1, grant1, source2, grant2, ...} for a new claim; for a repeated
-- claim id, the stored answer as it was stored (a JSON string of the same flat list),
-- which the caller parses: decoding it here would turn data leaguekit did not write
-- into a script error instead of a clear protocol error.

local with_id = ARGV[1] == '1'
if with_id then
  local seen = redis.call('HGET', KEYS[2], ARGV[2])
  if seen then
    return seen
  end
end
local all = redis.call('HGETALL', KEYS[1])
local answer = {}
for i = 1, #all, 2 do
  local value = all[i + 1]
  if string.sub(value, 1, 2) == 'p|' then
    local grant = string.sub(value, 3)
    redis.call('HSET', KEYS[1], all[i], 'c|' .. grant)
    answer[#answer + 1] = all[i]
    answer[#answer + 1] = grant
  end
end
if with_id then
  -- An empty Lua table encodes as {} in cjson; store [] so it parses as a list.
  local encoded = '[]'
  if #answer > 0 then
    encoded = cjson.encode(answer)
  end
  redis.call('HSET', KEYS[2], ARGV[2], encoded)
end
return answer
