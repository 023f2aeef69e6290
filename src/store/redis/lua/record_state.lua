-- record_state.lua: record a player's latest placement unless a later one is stored,
-- so concurrent or repeated writes converge on the latest period. A later placement
-- moves the stored one to prev_period/prev_tier/prev_bracket. Every placement starts
-- the expiry of all the player's keys anew.
--
-- KEYS[1]  player state hash: period, tier, bracket, prev_period, prev_tier,
--          prev_bracket
-- KEYS[2]  player profile, KEYS[3] rewards, KEYS[4] claims (only their expiry)
-- ARGV[1]  period id (decimal, no leading zeros)
-- ARGV[2]  tier name
-- ARGV[3]  bracket number
-- ARGV[4]  seconds the player's keys live from now
-- ARGV[5]  trim: claimed rewards earned before this period (the rollover never grants
--          them again) and claim answers given before it are deleted, so a player who
--          keeps playing keeps small records
--
-- Reply: 1 if written, else 0; {"malformed", what} for a state it did not write.

-- Compares canonical decimal strings exactly, at any length (no conversion to a
-- double, which would be inexact above 2^53).
local function greater(a, b)
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end

local function expire_all()
  for i = 1, 4 do
    redis.call('EXPIRE', KEYS[i], ARGV[4])
  end
end

local trim = tonumber(ARGV[5])
local rewards = redis.call('HGETALL', KEYS[3])
for i = 1, #rewards, 2 do
  if string.sub(rewards[i + 1], 1, 2) == 'c|' then
    local period = tonumber(string.match(rewards[i], '^(%d+)/'))
    if period and period < trim then
      redis.call('HDEL', KEYS[3], rewards[i])
    end
  end
end
local claims = redis.call('HGETALL', KEYS[4])
for i = 1, #claims, 2 do
  local period = tonumber(string.match(claims[i + 1], '^(%d+)|'))
  if not period or period < trim then
    redis.call('HDEL', KEYS[4], claims[i])
  end
end

local current = redis.call('HGET', KEYS[1], 'period')
if not current then
  redis.call('HSET', KEYS[1], 'period', ARGV[1], 'tier', ARGV[2], 'bracket', ARGV[3])
  expire_all()
  return 1
end
if not greater(ARGV[1], current) then
  expire_all()
  return 0
end
local old = redis.call('HMGET', KEYS[1], 'tier', 'bracket')
if not old[1] or not old[2] then
  return {'malformed', 'state ' .. KEYS[1] .. ' has a period but no tier or bracket'}
end
redis.call('HSET', KEYS[1],
  'prev_period', current, 'prev_tier', old[1], 'prev_bracket', old[2],
  'period', ARGV[1], 'tier', ARGV[2], 'bracket', ARGV[3])
expire_all()
return 1
