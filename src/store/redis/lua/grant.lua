-- grant.lua: grant rewards, each once: a reward already pending or claimed under the
-- same source is never written again. Keeps each player's rewards at least ttl, and
-- their live state and profile records too (a rewarded player's records live at
-- least ttl from the grant, as on the embedded store, whose player records expire
-- together).
--
-- One call grants any number of rewards (a closed bracket's, on one server; those of
-- one player bucket's slot on a cluster): entering a script costs Redis more than
-- the three commands of a grant, and a bracket of 100 grants about ten.
--
-- KEYS[3i - 2]  grant i's player rewards (hash: source -> "p|grant" pending or
--               "c|grant" claimed)
-- KEYS[3i - 1], KEYS[3i]  the player's state and profile buckets (hashes: player ->
--               "deadline|..."; see record_state.lua)
-- ARGV[1]  ttl in seconds
-- ARGV[2]  now in unix seconds by the clock that judges deadlines (see
--          record_state.lua), or "" for this server's TIME
-- ARGV[3i], ARGV[3i + 1], ARGV[3i + 2]  grant i's source ("period/tier/bracket"),
--          grant and player
--
-- Reply: one per grant, in order: 1 if granted now, 0 if it already was, or
-- {"refused", error} when the server refused a command of that grant (WRONGTYPE on a
-- key leaguekit did not write); the others go on. Not an error reply inside the
-- array: a client may turn one into an error for the whole call (see update.lua).

local kept = {}
local ttl = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1])
end
local lives_to = now + ttl

-- Raises the live record of the player in bucket KEYS[k] to `lives_to`, and the
-- bucket's TTL to a minute past it (as record_state.lua does). A record past its
-- deadline stays absent; one this script cannot read is left for the reads to report.
local function keep(k, player)
  local bucket = KEYS[k]
  local record = redis.call('HGET', bucket, player)
  local d, rest = string.match(record or '', '^(%d+)(|.*)$')
  if not d or tonumber(d) <= now or tonumber(d) >= lives_to then
    return
  end
  redis.call('HSET', bucket, player, string.format('%d', lives_to) .. rest)
  local left = redis.call('TTL', bucket)
  if left < ttl then
    redis.call('EXPIRE', bucket, ttl + 60)
  end
end

local function grant(i)
  local key = KEYS[3 * i - 2]
  local granted = redis.call('HSETNX', key, ARGV[3 * i], 'p|' .. ARGV[3 * i + 1])
  -- A key's expiry is checked once a call, however many of its grants the call holds:
  -- set where there was none (NX: a new key, one command), else raised to ttl where
  -- it was shorter (GT); the player's records with it.
  if not kept[key] then
    local set = redis.call('EXPIRE', key, ARGV[1], 'NX')
    if set == 0 then
      redis.call('EXPIRE', key, ARGV[1], 'GT')
    end
    kept[key] = true
    -- The grant is written: a bucket this script cannot use (data leaguekit did
    -- not write) must not turn it into a refusal, which would block it for good.
    pcall(keep, 3 * i - 1, ARGV[3 * i + 2])
    pcall(keep, 3 * i, ARGV[3 * i + 2])
  end
  return granted
end

local reply = {}
for i = 1, #KEYS / 3 do
  local ok, answer = pcall(grant, i)
  if ok then
    reply[i] = answer
  elseif type(answer) == 'table' and answer.err then
    reply[i] = {'refused', answer.err}
  else
    reply[i] = {'refused', tostring(answer)}
  end
end
return reply
