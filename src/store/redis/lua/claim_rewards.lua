-- claim_rewards.lua: claim every pending reward of a player atomically. With a
-- claim id, the answer is stored (with the period it was given in, so that
-- record_state.lua can trim old answers), and a repeated claim with that id returns
-- it again and claims nothing new.
--
-- KEYS[1]  rewards (hash: source -> "p|grant" pending or "c|grant" claimed)
-- KEYS[2]  claims (hash: claim id -> "period|answer", the answer cjson-encoded)
-- ARGV[1]  "1" if a claim id is given, else "0"
-- ARGV[2]  the claim id (any string, "" included; ignored when ARGV[1] is "0")
-- ARGV[3]  the current period
-- ARGV[4]  seconds the keys live at least
-- KEYS[3], ARGV[5], ARGV[6]  with a season's `[events]` only: the bucket's event
--          log, its spec and the reward.claimed event's head (up to its "data":),
--          appended with the rewards claimed now, if any (events.lua)
--
-- Reply: {source1, grant1, source2, grant2, ...} for a new claim; for a repeated
-- claim id, the stored answer as it was stored (a JSON string of the same flat list),
-- which the caller parses: decoding it here would turn data leaguekit did not write
-- into a script error instead of a clear protocol error.

local with_id = ARGV[1] == '1'
if with_id then
  local seen = redis.call('HGET', KEYS[2], ARGV[2])
  if seen then
    -- "period|answer"; answers stored by older versions have no period.
    return string.match(seen, '^%d+|(.*)$') or seen
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
if KEYS[3] and #answer > 0 then
  -- {"rewards":[{"grant":G,"source":S},...]}} in source order, byte for byte as the
  -- in-memory store writes it (serde_json, keys sorted).
  local order = {}
  for i = 1, #answer, 2 do
    order[#order + 1] = i
  end
  table.sort(order, function(a, b) return answer[a] < answer[b] end)
  local rewards = {}
  for _, i in ipairs(order) do
    rewards[#rewards + 1] = '{"grant":' .. json_text(answer[i + 1]) .. ',"source":'
      .. json_text(answer[i]) .. '}'
  end
  append_events(3, ARGV[5],
    {ARGV[6] .. '{"rewards":[' .. table.concat(rewards, ',') .. ']}}'})
end
if with_id then
  -- An empty Lua table encodes as {} in cjson; store [] so it parses as a list.
  local encoded = '[]'
  if #answer > 0 then
    encoded = cjson.encode(answer)
  end
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. '|' .. encoded)
end
local ttl = tonumber(ARGV[4])
for i = 1, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 and redis.call('TTL', KEYS[i]) < ttl then
    redis.call('EXPIRE', KEYS[i], ARGV[4])
  end
end
return answer
