-- player_fix.lua: one correction of a player's, atomic on the player's slot:
-- "grant" a corrected reward (once per source, never one revoked from them),
-- "revoke" a reward while it is still pending (remembered, so neither a repeat nor a
-- grant gives it back; a claimed reward stays), or "credit": record a tier credit decision unless one is
-- recorded (the first decision stays).
--
-- KEYS[1]  the player's rewards (hash: source -> "p|grant" pending, "c|grant" claimed)
-- KEYS[2]  the player's corrections (hash: "r:<source>" -> a revoked grant or "",
--          "t:<source>" -> a tier credit decision)
-- ARGV[1]  "grant" | "revoke" | "credit"
-- ARGV[2]  the reward's source, or the decision's field
-- ARGV[3]  the grant, or the decision ("revoke": unused)
-- ARGV[4]  seconds the keys written live at least
--
-- Reply: "grant": 1 if granted now, else 0; "revoke": "revoked" | "claimed" |
-- "absent"; "credit": the decision recorded

local rewards = KEYS[1]
local fixes = KEYS[2]
local mode = ARGV[1]

-- Keeps KEYS[i] at least ARGV[4] seconds: set where there was no expiry (NX), else
-- raised where it was shorter (GT).
local function keep(i)
  local key = KEYS[i]
  local set = redis.call('EXPIRE', key, ARGV[4], 'NX')
  if set == 0 then
    redis.call('EXPIRE', key, ARGV[4], 'GT')
  end
end

if mode == 'grant' then
  if redis.call('HEXISTS', fixes, 'r:' .. ARGV[2]) == 1 then
    return 0
  end
  local granted = redis.call('HSETNX', rewards, ARGV[2], 'p|' .. ARGV[3])
  keep(1)
  return granted
end
if mode == 'revoke' then
  -- A revocation is remembered as the grant removed, or "" when there was none to
  -- remove: either way no corrected grant of that source comes after it.
  local before = redis.call('HGET', fixes, 'r:' .. ARGV[2])
  if before then
    if before == '' then
      return 'absent'
    end
    return 'revoked'
  end
  local value = redis.call('HGET', rewards, ARGV[2])
  if value and string.sub(value, 1, 2) == 'c|' then
    return 'claimed'
  end
  local removed = ''
  if value and string.sub(value, 1, 2) == 'p|' then
    redis.call('HDEL', rewards, ARGV[2])
    removed = string.sub(value, 3)
  end
  redis.call('HSET', fixes, 'r:' .. ARGV[2], removed)
  keep(2)
  if removed == '' then
    return 'absent'
  end
  return 'revoked'
end
redis.call('HSETNX', fixes, ARGV[2], ARGV[3])
keep(2)
return redis.call('HGET', fixes, ARGV[2])
