-- snapshot.lua: players' state records, profile records and rewards, each player's
-- three as one read of their bucket's slot. A record past its deadline (unix seconds
-- by this server's clock, see record_state.lua) is answered as absent, as an expired
-- key would be.
--
-- One call reads any number of players (the bulk path sends a batch's players of a
-- slot at once on a cluster, of any slots on one server; the single path one), so
-- the clock is read and the script entered once per call, not once per player.
--
-- Per player i, three keys from KEYS[3(i-1) + 1] and the player id as ARGV[i]:
-- KEYS  state bucket (hash: player -> "deadline|period:tier:bracket[|previous]");
--       profile bucket (hash: player -> "deadline|version|json"); the player's
--       rewards (hash: source -> "p|grant" or "c|grant")
--
-- Reply: one per player, in order: {state, profile, profile's deadline, source1,
-- value1, ...}, state and profile without their deadline, "" when absent or expired
-- (the profile's deadline too); {"malformed", what} for a record it did not write.
-- The profile's deadline lets the placement's state write (record_state.lua) leave a
-- profile that already lives long enough without reading it again.

local t = redis.call('TIME')
local now = tonumber(t[1])

-- Player i's keys are KEYS[k + 1..3], k = 3(i-1), and their id ARGV[a].
local function read(k, a)
  local player = ARGV[a]
  local reply = {}
  local deadline = ''
  for i = 1, 2 do
    local record = redis.call('HGET', KEYS[k + i], player)
    local body = ''
    if record then
      local d, rest = string.match(record, '^(%d+)|(.*)$')
      if not d then
        return {'malformed', 'record of ' .. player .. ' in ' .. KEYS[k + i] .. ': ' .. record}
      end
      if tonumber(d) > now then
        body = rest
        if i == 2 then
          deadline = d
        end
      end
    end
    reply[i] = body
  end
  reply[3] = deadline
  local rewards = redis.call('HGETALL', KEYS[k + 3])
  for i = 1, #rewards do
    reply[#reply + 1] = rewards[i]
  end
  return reply
end

-- One player's failure (a command refused, such as WRONGTYPE on a key leaguekit did not
-- write) is that player's answer, an error reply in its place; the others go on.
local function each(f, k, a)
  local ok, answer = pcall(f, k, a)
  if ok then
    return answer
  end
  if type(answer) == 'table' and answer.err then
    return answer
  end
  return {err = tostring(answer)}
end

local reply = {}
for i = 1, #ARGV do
  local k = 3 * (i - 1)
  reply[i] = each(read, k, i)
end
return reply
