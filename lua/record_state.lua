-- record_state.lua: record a player's latest placement unless a later one is stored,
-- so concurrent or repeated writes converge on the latest period. A later placement
-- moves the stored one to prev_period/prev_tier/prev_bracket.
--
-- KEYS[1]  player state hash: period, tier, bracket, prev_period, prev_tier,
--          prev_bracket
-- ARGV[1]  period id (decimal, no leading zeros)
-- ARGV[2]  tier name
-- ARGV[3]  bracket number
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

local current = redis.call('HGET', KEYS[1], 'period')
if not current then
  redis.call('HSET', KEYS[1], 'period', ARGV[1], 'tier', ARGV[2], 'bracket', ARGV[3])
  return 1
end
if not greater(ARGV[1], current) then
  return 0
end
local old = redis.call('HMGET', KEYS[1], 'tier', 'bracket')
if not old[1] or not old[2] then
  return {'malformed', 'state ' .. KEYS[1] .. ' has a period but no tier or bracket'}
end
redis.call('HSET', KEYS[1],
  'prev_period', current, 'prev_tier', old[1], 'prev_bracket', old[2],
  'period', ARGV[1], 'tier', ARGV[2], 'bracket', ARGV[3])
return 1
