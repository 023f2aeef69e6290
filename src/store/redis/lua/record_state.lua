-- record_state.lua: record a player's latest placement in their bucket's state hash,
-- so concurrent or repeated writes converge on the latest period. A later period
-- moves the stored placement to the previous one; the same period replaces the tier
-- and bracket (a join that found its bracket full corrects the state) and keeps the
-- previous one; an earlier period is ignored. Every placement starts the expiry of
-- all the player's records anew.
--
-- Fields of a hash cannot expire, so each record carries its own deadline (unix
-- seconds by this server's clock): a record past it counts as absent everywhere, and
-- is deleted by a later write to its bucket that samples it (see the pruning below).
-- The bucket keys' TTLs are only ever raised, to the latest deadline of their records.
--
-- KEYS[1]  state bucket (hash: player -> "deadline|period:tier:bracket" with
--          "|period:tier:bracket" of the previous placement appended when there is one)
-- KEYS[2]  profile bucket (hash: player -> "deadline|version|json"): its deadline
--          follows the state's
-- KEYS[3]  the player's rewards, KEYS[4] their claims (per-player keys: their TTL)
-- ARGV[1]  player id
-- ARGV[2]  period id (decimal, no leading zeros)
-- ARGV[3]  tier name (never contains '|')
-- ARGV[4]  bracket number
-- ARGV[5]  seconds the player's records live from now
-- ARGV[6]  trim: claimed rewards earned before this period (the rollover never grants
--          them again) and claim answers given before it are deleted, so a player who
--          keeps playing keeps small records
--
-- Reply: 1 if the placement was written, else 0; {"malformed", what} (nothing
-- written) for a record it did not write.

-- Compares canonical decimal strings exactly, at any length (no conversion to a
-- double, which would be inexact above 2^53).
local function greater(a, b)
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end

local t = redis.call('TIME')
local now = tonumber(t[1])
local ttl = tonumber(ARGV[5])
local deadline = string.format('%d', now + ttl)
local player = ARGV[1]

-- The stored state, read (and checked) before anything is written.
local record = redis.call('HGET', KEYS[1], player)
local current, rest
if record then
  local d, placed, tail = string.match(record, '^(%d+)|([^|]+)(.*)$')
  local period = placed and string.match(placed, '^(%d+):.*:%d+$')
  if not d or not period or (tail ~= '' and not string.match(tail, '^|%d+:.*:%d+$')) then
    return {'malformed', 'state of ' .. player .. ' in ' .. KEYS[1] .. ': ' .. record}
  end
  if tonumber(d) > now then
    current = period
    rest = tail
  end
end
local profile = redis.call('HGET', KEYS[2], player)
local profile_body
if profile then
  local d, body = string.match(profile, '^(%d+)|(.*)$')
  if not d then
    return {'malformed', 'profile of ' .. player .. ' in ' .. KEYS[2] .. ': ' .. profile}
  end
  if tonumber(d) > now then
    profile_body = body
  end
end

local placement = ARGV[2] .. ':' .. ARGV[3] .. ':' .. ARGV[4]
local written = 1
if not current then
  redis.call('HSET', KEYS[1], player, deadline .. '|' .. placement)
elseif greater(ARGV[2], current) then
  local was = string.match(record, '^%d+|([^|]+)')
  redis.call('HSET', KEYS[1], player, deadline .. '|' .. placement .. '|' .. was)
elseif ARGV[2] == current then
  redis.call('HSET', KEYS[1], player, deadline .. '|' .. placement .. rest)
else
  -- An earlier period: the placement stays, the expiry starts anew.
  redis.call('HSET', KEYS[1], player, deadline .. string.match(record, '^%d+(|.*)$'))
  written = 0
end
if profile_body then
  redis.call('HSET', KEYS[2], player, deadline .. '|' .. profile_body)
elseif profile then
  redis.call('HDEL', KEYS[2], player)
end

-- Bounded pruning: on one write in 16 (by the microseconds of TIME), up to 16 records
-- of each bucket, sampled, go if past their deadline; so on average one record is
-- looked at per write. Sampling on every write cost three quarters of this script's
-- time on buckets of 60 players (HRANDFIELD WITHVALUES scans the listpack and copies
-- the values), and one sample per write keeps a bucket's dead records to about the
-- share of writes that are a player's last.
local prune = tonumber(t[2]) % 16 == 0
for i = 1, 2 do
  if prune then
    local sample = redis.call('HRANDFIELD', KEYS[i], 16, 'WITHVALUES')
    for j = 1, #sample, 2 do
      local d = tonumber(string.match(sample[j + 1], '^(%d+)|'))
      if d and d <= now then
        redis.call('HDEL', KEYS[i], sample[j])
      end
    end
  end
  if redis.call('EXISTS', KEYS[i]) == 1 and redis.call('TTL', KEYS[i]) < ttl then
    redis.call('EXPIRE', KEYS[i], ARGV[5])
  end
end

local trim = tonumber(ARGV[6])
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
for i = 3, 4 do
  redis.call('EXPIRE', KEYS[i], ARGV[5])
end
return written
