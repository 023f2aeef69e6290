-- snapshot.lua: players' state records, profile records and rewards, each player's
-- three as one read of their bucket's slot. A record past its deadline (unix seconds
-- by this server's clock, or by the league clock given in ARGV[1], see
-- record_state.lua) is answered as absent, as an expired key would be.
--
-- One call reads any number of players (the bulk path sends a batch's players of a
-- slot at once on a cluster, of any slots on one server; the single path one), so
-- the clock is read and the script entered once per call, not once per player.
--
-- ARGV[1]  now in unix seconds by the clock that judges deadlines (a store given the
--          league clock, see src/store/redis/clocked.rs), or "" for this server's TIME
--
-- Per player i, four keys from KEYS[4(i-1) + 1] and the player id as ARGV[i + 1]:
-- KEYS  state bucket (hash: player -> "deadline|period:tier:bracket[|previous]");
--       profile bucket (hash: player -> "deadline|version|json"); the player's
--       rewards (hash: source -> "p|grant" or "c|grant"); ban bucket (hash: player ->
--       ban record, JSON, without deadline: the engine judges its end)
--
-- Reply: one flat array, each player's answer after the one before, in order:
--   the number of reward strings 2r (an integer), then state, profile, the profile's
--   deadline, the ban record ("" when none), then r pairs source, value: state and profile without their deadline,
--   "" when absent or expired (the profile's deadline too);
--   or "malformed", then what: a record it did not write;
--   or an error reply: a command refused (WRONGTYPE on a key leaguekit did not write).
-- Flat rather than a table per player: Redis turns each table of a script's reply
-- into RESP by looking up six special fields of it (err, ok, double, ...), which was
-- about a twentieth of a join's Redis instructions under callgrind.
-- The profile's deadline lets the placement's state write (record_state.lua) leave a
-- profile that already lives long enough without reading it again.

local now = clock_s(ARGV[1])

local reply = {}

-- Player i's keys are KEYS[k + 1..4], k = 4(i-1), and their id ARGV[a]: their answer
-- is appended to the reply (see above), or {"malformed", what} returned, nothing
-- appended.
local function read(k, a)
  local player = ARGV[a]
  local state, profile, deadline = '', '', ''
  for i = 1, 2 do
    local record = redis.call('HGET', KEYS[k + i], player)
    if record then
      local d, rest = string.match(record, '^(%d+)|(.*)$')
      if not d then
        return {'malformed', 'record of ' .. player .. ' in ' .. KEYS[k + i] .. ': ' .. record}
      end
      if tonumber(d) > now then
        if i == 1 then
          state = rest
        else
          profile, deadline = rest, d
        end
      end
    end
  end
  local rewards = redis.call('HGETALL', KEYS[k + 3])
  local ban = redis.call('HGET', KEYS[k + 4], player) or ''
  local n = #reply
  reply[n + 1] = #rewards
  reply[n + 2] = state
  reply[n + 3] = profile
  reply[n + 4] = deadline
  reply[n + 5] = ban
  for i = 1, #rewards do
    reply[n + 5 + i] = rewards[i]
  end
  return nil
end

-- One player's failure (a command refused, such as WRONGTYPE on a key leaguekit did
-- not write) is that player's answer, an error reply in its place; the others go on.
-- A failure comes before the player's answer is appended (every command runs first).
for i = 1, #ARGV - 1 do
  local ok, answer = pcall(read, 4 * (i - 1), i + 1)
  if not ok then
    if type(answer) == 'table' and answer.err then
      reply[#reply + 1] = answer
    else
      reply[#reply + 1] = {err = tostring(answer)}
    end
  elseif answer then
    reply[#reply + 1] = 'malformed'
    reply[#reply + 1] = answer[2]
  end
end
return reply
