-- standings.lua: one page of a bracket board with the cached profiles, in one step.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- ARGV[1]  first 0-based rank
-- ARGV[2]  last 0-based rank (inclusive)
-- ARGV[3]  "1" to read the range, "0" for the count only (a page of zero entries)
--
-- Reply: one string, "total first-rank player score profile player score ..." joined
-- by the unit separator (byte 31), an empty profile for none. One bulk string costs
-- the client one allocation and no per-item parsing, where an array of 300 items
-- cost 300; no field can contain byte 31 (player ids have no control characters,
-- scores are numbers, cached profiles are JSON, which escapes them).
-- Scores are the raw zset scores (minus the packed value); the caller parses them.
-- Ranks pass through as the strings the caller formatted, never as Lua numbers.

local SEP = '\31'
local total = redis.call('ZCARD', KEYS[1])
local out = {string.format('%.0f', total), ARGV[1]}
if ARGV[3] ~= '1' then
  return table.concat(out, SEP)
end

local flat = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #flat == 0 then
  return table.concat(out, SEP)
end

local n = #flat / 2
local profile
if n * 2 >= total then
  -- Most of the board: one pass over the whole (small, listpack) cache beats a
  -- lookup per player, each a scan of it.
  local all = redis.call('HGETALL', KEYS[2])
  local by = {}
  for i = 1, #all, 2 do
    by[all[i]] = all[i + 1]
  end
  profile = function(i)
    return by[flat[2 * i - 1]] or ''
  end
else
  local players = {}
  for i = 1, #flat, 2 do
    players[#players + 1] = flat[i]
  end
  local got = redis.call('HMGET', KEYS[2], unpack(players))
  profile = function(i)
    return got[i] or ''
  end
end
for i = 1, n do
  out[#out + 1] = flat[2 * i - 1]
  out[#out + 1] = flat[2 * i]
  out[#out + 1] = profile(i)
end
return table.concat(out, SEP)
