-- claim_rewards.lua: claim every pending reward of a player atomically. With a
-- claim id, the answer is stored, and a repeated claim with that id returns it
-- again and claims nothing new.
--
-- KEYS[1]  rewards (hash: source -> "p|grant" pending or "c|grant" claimed)
-- KEYS[2]  claims (hash: claim id -> the answer, cjson-encoded)
-- ARGV[1]  claim id, or "" for none
--
-- Reply: {source1, grant1, source2, grant2, ...}

if ARGV[1] ~= '' then
  local seen = redis.call('HGET', KEYS[2], ARGV[1])
  if seen then
    return cjson.decode(seen)
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
if ARGV[1] ~= '' then
  -- An empty Lua table encodes as {} in cjson; store [] so it decodes to an array.
  local encoded = '[]'
  if #answer > 0 then
    encoded = cjson.encode(answer)
  end
  redis.call('HSET', KEYS[2], ARGV[1], encoded)
end
return answer
