-- record_state.lua: record a player's latest placement in their bucket's state hash,
-- so concurrent or repeated writes converge on the latest period. A later period
-- moves the stored placement to the previous one; the same period replaces the tier
-- and bracket (a join that found its bracket full corrects the state) and keeps the
-- previous one; an earlier period is ignored. Every placement starts the expiry of
-- all the player's records anew (a profile that already lives longer keeps its
-- deadline, see the hints below).
--
-- Fields of a hash cannot expire, so each record carries its own deadline (unix
-- seconds by this server's clock, or by the clock a store was given, ARGV[4]: a
-- league clock that runs a season in seconds, see src/store/redis/clocked.rs; every
-- script that judges deadlines then takes it): a record past it counts as absent
-- everywhere, and
-- is deleted by a later write to its bucket that samples it (see the pruning below).
-- The bucket keys' TTLs are only ever raised, to a minute past the latest deadline of
-- their records.
--
-- One call records any number of players of one period (the bulk path sends a
-- batch's players of a slot at once on a cluster, of any slots on one server; the
-- single path one): the clock is read, the deadline formatted and entering a script
-- (about 2 µs with its arguments) paid once per call, not once per player.
--
-- Shared by every player of the call:
-- ARGV[1]  period id (decimal, no leading zeros)
-- ARGV[2]  seconds the players' records live from now
-- ARGV[3]  trim: claimed rewards earned before this period (the rollover never
--          grants them again) and claim answers given before it are deleted, so a
--          player who keeps playing keeps small records
-- ARGV[4]  now in unix seconds by the clock that judges deadlines, or "" for TIME
--
-- Per player i, four keys from KEYS[4(i-1) + 1] and four arguments from
-- ARGV[4 + 4(i-1) + 1]:
-- KEYS  state bucket (hash: player -> "deadline|period:tier:bracket" with
--       "|period:tier:bracket" of the previous placement appended when there is one);
--       profile bucket (hash: player -> "deadline|version|json"): its deadline
--       follows the state's; the player's rewards and their claims (per-player keys:
--       their TTL)
-- ARGV  player id; tier name (never contains '|'); bracket number; hints of what
--       the caller's read of the player found, right or wrong: "s" if it found no
--       live state (the state is then created with HSETNX, which saves a lookup of
--       the bucket, and read as below if one exists after all), "p" if it found no
--       live profile (the profile bucket is then left alone: a profile set since
--       that read has a deadline of its own, by the placement's rule), both, or "";
--       then, when it found a live profile, that profile's deadline in decimal (the
--       profile is then left alone if that deadline reaches to within a minute of
--       this placement's)
--
-- Reply: one per player, in order: 1 if the placement was written, else 0;
-- {"malformed", what} (nothing written for that player) for a record it did not
-- write.

-- Compares canonical decimal strings exactly, at any length (no conversion to a
-- double, which would be inexact above 2^53).
local function greater(a, b)
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end

-- Seconds by which a period's deadlines may differ (the clocks' rounding, and a
-- league clock that stands still): a profile that lives to within them of the
-- placement's deadline is left alone, and a bucket's TTL is raised this far past it.
local SLACK = 60

-- Pruning on one call in 16: see deadlines.lua.
local now, pruning = deadline_clock(ARGV[4])

local period = ARGV[1]
local ttl = tonumber(ARGV[2])
local deadline = string.format('%d', now + ttl)

-- Player i's keys are KEYS[k + 1..4] and arguments ARGV[a + 1..4]:
-- k = 4(i-1), a = 4 + 4(i-1).
local function record(k, a)
  local player = ARGV[a + 1]
  local hints = ARGV[a + 4]
  -- The profile is left alone when the read found none, or found one that lives to
  -- within a minute of this placement's deadline: one set in this period, since a
  -- period's deadlines differ only by the rounding and the offset of the game
  -- server's clock and this server's (a league clock that stands still, as the
  -- bench's, drifts by the seconds between the two calls). Its record, and so its
  -- bucket's TTL, already reach that far, and only set_profile (which never lowers a
  -- deadline) writes a profile between the read and now. So a profile may lapse up
  -- to a minute before the state, after player_ttl (at least a day); reading and
  -- writing it again is three commands of the placement's eleven or so.
  local lives = tonumber(string.match(hints, '%d+'))
  local touch_profile = not string.find(hints, 'p', 1, true)
    and not (lives and lives >= now + ttl - SLACK)

  -- The stored profile, read (and checked) before anything is written.
  local profile, profile_body
  if touch_profile then
    profile = redis.call('HGET', KEYS[k + 2], player)
    if profile then
      local d, body = string.match(profile, '^(%d+)|(.*)$')
      if not d then
        return {'malformed', 'profile of ' .. player .. ' in ' .. KEYS[k + 2] .. ': ' .. profile}
      end
      if tonumber(d) > now then
        profile_body = body
      end
    end
  end

  local placement = period .. ':' .. ARGV[a + 2] .. ':' .. ARGV[a + 3]
  local written = 1
  -- A player the caller found no state for: created unless a record exists.
  local created = string.find(hints, 's', 1, true)
    and redis.call('HSETNX', KEYS[k + 1], player, deadline .. '|' .. placement) == 1
  if not created then
    -- The stored state, read and checked before it is written.
    local record = redis.call('HGET', KEYS[k + 1], player)
    local current, rest
    if record then
      local d, placed, tail = string.match(record, '^(%d+)|([^|]+)(.*)$')
      local stored = placed and string.match(placed, '^(%d+):.*:%d+$')
      if not d or not stored or (tail ~= '' and not string.match(tail, '^|%d+:.*:%d+$')) then
        return {'malformed', 'state of ' .. player .. ' in ' .. KEYS[k + 1] .. ': ' .. record}
      end
      if tonumber(d) > now then
        current = stored
        rest = tail
      end
    end
    if not current then
      redis.call('HSET', KEYS[k + 1], player, deadline .. '|' .. placement)
    elseif greater(period, current) then
      local was = string.match(record, '^%d+|([^|]+)')
      redis.call('HSET', KEYS[k + 1], player, deadline .. '|' .. placement .. '|' .. was)
    elseif period == current then
      redis.call('HSET', KEYS[k + 1], player, deadline .. '|' .. placement .. rest)
    else
      -- An earlier period: the placement stays, the expiry starts anew.
      redis.call('HSET', KEYS[k + 1], player, deadline .. string.match(record, '^%d+(|.*)$'))
      written = 0
    end
  end
  if profile_body then
    redis.call('HSET', KEYS[k + 2], player, deadline .. '|' .. profile_body)
  elseif profile then
    redis.call('HDEL', KEYS[k + 2], player)
  end

  -- Bounded pruning (deadlines.lua) of each bucket written.
  for i = 1, touch_profile and 2 or 1 do
    if pruning then
      prune(k + i, now)
    end
    -- TTL answers -2 for a key that does not exist (a profile bucket never written).
    -- A bucket raised is raised a minute past the record's deadline, so the writes
    -- of the next minute find it long enough and skip the EXPIRE (a period's
    -- deadlines differ by the clocks' rounding, and by the seconds that pass under a
    -- league clock that stands still): a bucket outlives its last record by at most
    -- a minute, and its records lapse by their own deadlines.
    local left = redis.call('TTL', KEYS[k + i])
    if left ~= -2 and left < ttl then
      redis.call('EXPIRE', KEYS[k + i], ttl + SLACK)
    end
  end

  -- Rewards and claims: most players have neither key, which one EXISTS tells.
  if redis.call('EXISTS', KEYS[k + 3], KEYS[k + 4]) == 0 then
    return written
  end
  local trim = tonumber(ARGV[3])
  local rewards = redis.call('HGETALL', KEYS[k + 3])
  for i = 1, #rewards, 2 do
    if string.sub(rewards[i + 1], 1, 2) == 'c|' then
      local earned = tonumber(string.match(rewards[i], '^(%d+)/'))
      if earned and earned < trim then
        redis.call('HDEL', KEYS[k + 3], rewards[i])
      end
    end
  end
  local claims = redis.call('HGETALL', KEYS[k + 4])
  for i = 1, #claims, 2 do
    local given = tonumber(string.match(claims[i + 1], '^(%d+)|'))
    if not given or given < trim then
      redis.call('HDEL', KEYS[k + 4], claims[i])
    end
  end
  for i = 3, 4 do
    redis.call('EXPIRE', KEYS[k + i], ARGV[2])
  end
  return written
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
for i = 1, (#ARGV - 4) / 4 do
  local k, a = 4 * (i - 1), 4 + 4 * (i - 1)
  reply[i] = each(record, k, a)
end
return reply
