-- snapshot.lua: a player's state record, profile record and rewards, as one read of
-- their bucket's slot. A record past its deadline (unix seconds by this server's
-- clock, see record_state.lua) is answered as absent, as an expired key would be.
--
-- KEYS[1]  state bucket (hash: player -> "deadline|period:tier:bracket[|previous]")
-- KEYS[2]  profile bucket (hash: player -> "deadline|version|json")
-- KEYS[3]  the player's rewards (hash: source -> "p|grant" or "c|grant")
-- ARGV[1]  player id
--
-- Reply: {state, profile, source1, value1, ...}, state and profile without their
-- deadline, "" when absent or expired; {"malformed", what} for a record it did not
-- write.

local t = redis.call('TIME')
local now = tonumber(t[1])
local reply = {}
for i = 1, 2 do
  local record = redis.call('HGET', KEYS[i], ARGV[1])
  local body = ''
  if record then
    local d, rest = string.match(record, '^(%d+)|(.*)$')
    if not d then
      return {'malformed', 'record of ' .. ARGV[1] .. ' in ' .. KEYS[i] .. ': ' .. record}
    end
    if tonumber(d) > now then
      body = rest
    end
  end
  reply[i] = body
end
local rewards = redis.call('HGETALL', KEYS[3])
for i = 1, #rewards do
  reply[#reply + 1] = rewards[i]
end
return reply
