-- grant.lua: grant rewards, each once: a reward already pending or claimed under the
-- same source is never written again. Keeps each player's rewards at least ttl.
--
-- One call grants any number of rewards (a closed bracket's, on one server; those of
-- one player bucket's slot on a cluster): entering a script costs Redis more than
-- the three commands of a grant, and a bracket of 100 grants about ten.
--
-- KEYS[i]  grant i's player rewards (hash: source -> "p|grant" pending or "c|grant"
--          claimed)
-- ARGV[1]  ttl in seconds; with a season's `[events]`, "ttl|keep cap" (events.lua):
--          then each grant has two keys (its rewards, its bucket's event log) and
--          three arguments (source, grant, the event appended if granted now)
-- ARGV[2i], ARGV[2i + 1]  grant i's source ("period/tier/bracket") and grant
--
-- Reply: one per grant, in order: 1 if granted now, 0 if it already was, or
-- {"refused", error} when the server refused a command of that grant (WRONGTYPE on a
-- key leaguekit did not write); the others go on. Not an error reply inside the
-- array: a client may turn one into an error for the whole call (see update.lua).

local ttl, spec = string.match(ARGV[1], '^(%d+)|?(.*)$')
local logged = spec ~= ''
local keys_per, args_per = 1, 2
if logged then
  keys_per, args_per = 2, 3
end
local kept = {}

local function grant(i)
  local k = keys_per * (i - 1) + 1
  local a = 1 + args_per * (i - 1)
  local key = KEYS[k]
  local granted = redis.call('HSETNX', key, ARGV[a + 1], 'p|' .. ARGV[a + 2])
  if logged and granted == 1 then
    append_events(k + 1, spec, {ARGV[a + 3]})
  end
  -- A key's expiry is checked once a call, however many of its grants the call holds:
  -- set where there was none (NX: a new key, one command), else raised to ttl where
  -- it was shorter (GT).
  if not kept[key] then
    local set = redis.call('EXPIRE', key, ttl, 'NX')
    if set == 0 then
      redis.call('EXPIRE', key, ttl, 'GT')
    end
    kept[key] = true
  end
  return granted
end

local reply = {}
for i = 1, #KEYS / keys_per do
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
