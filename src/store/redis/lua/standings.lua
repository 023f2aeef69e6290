-- standings.lua: one page of a bracket board with the cached profiles, in one step.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> profile JSON)
-- KEYS[3]  bracket page cache (hash: "first:last" -> this script's reply)
-- KEYS[4]  bracket meta (hash: field "paged" says the page cache may hold pages)
-- ARGV[1]  first 0-based rank
-- ARGV[2]  last 0-based rank (inclusive)
-- ARGV[3]  "1" to read the range, "0" for the count only (a page of zero entries)
-- ARGV[4]  ms a page stays in the page cache at most; "0" to neither read nor fill it
--
-- Reply: one string, "total first-rank player score profile player score ..." joined
-- by the unit separator (byte 31), an empty profile for none. One bulk string costs
-- the client one allocation and no per-item parsing, where an array of 300 items
-- cost 300; no field can contain byte 31 (player ids have no control characters,
-- scores are numbers, cached profiles are JSON, which escapes them).
-- Scores are the raw zset scores (minus the packed value); the caller parses them.
-- Ranks pass through as the strings the caller formatted, never as Lua numbers.
--
-- Most pages are not built here: the store reads kept pages with a plain HGET and
-- builds the others in the client (open_page.lua, keep_page.lua), which costs Redis
-- about a seventh of this script (turning 400 strings into Lua ones is most of it).
-- This script is the path for what that one does not cover: the count alone (ARGV[3]
-- "0") and a build whose MULTI failed (a slot being moved, a script not yet loaded).
--
-- The page cache: building a page is most of its cost (ZRANGE, the profile lookups,
-- 300 Lua strings and their concatenation: about 75 us of Redis CPU for 100 entries,
-- where returning a stored string costs a few). Every script that changes what a page
-- shows (update.lua, enter.lua, cache_profile.lua) deletes the bracket's page cache in
-- the same atomic step, so a cached page is always the page this script would build
-- now. The page cache never outlives the board (page_expiry.lua), since the store
-- reads kept pages without a script;
-- a cached page whose count differs from the board's is not used here either.
-- The meta field "paged" is set with the first kept page, so that update.lua and
-- enter.lua, which read the meta hash anyway, delete the page cache only when there
-- may be one: an unconditional DEL cost every update about 1 us of Redis CPU (7%).
-- A meta hash created here takes the board's expiry (the rollover later sets both).
--
-- Redis full (maxmemory under noeviction): the page is answered and not kept (see
-- refused in cache_writes.lua), so reads keep working while Redis refuses writes.

local SEP = '\31'
local total = redis.call('ZCARD', KEYS[1])
local head = string.format('%.0f', total) .. SEP .. ARGV[1]
if ARGV[3] ~= '1' then
  return head
end

local field = ARGV[1] .. ':' .. ARGV[2]
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  local hit = redis.call('HGET', KEYS[3], field)
  if hit and (hit == head or string.sub(hit, 1, #head + 1) == head .. SEP) then
    return hit
  end
end

local function cached(reply)
  if ttl > 0 then
    local left = redis.call('PTTL', KEYS[1])
    if refused(redis.pcall('HSET', KEYS[3], field, reply)) then
      return reply
    end
    keep_new(3, 1, left, ARGV[4])
    mark_paged(4, 1, left)
  end
  return reply
end

local out = {head}

local flat = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #flat == 0 then
  return head
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
return cached(table.concat(out, SEP))
