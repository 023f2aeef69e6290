-- enter.lua: put joined players on their bracket's board as never-scored, and cache
-- their profiles beside it. Idempotent: an existing entry keeps its score.
-- A closed bracket (frozen by the rollover) is refused and left unchanged, and so is
-- a full one (possible only after the server lost the period's join counters while
-- this board survived): no board ever holds more than the bracket size.
--
-- One call enters any number of players of one bracket (the bulk path sends a whole
-- batch's players of a bracket at once, the single path one), with a fixed number of
-- commands per call rather than per player: Redis 7 costs about a microsecond per
-- redis.call, more than the work of most of them on a 100-player board.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket profile cache (hash: player -> "version json")
-- KEYS[3]  bracket meta (hash: field "closed" marks a closed bracket, "paged" that
--          the page cache may hold pages, "ban:<player>" a banned player's marker)
-- KEYS[4]  bracket page cache (see standings.lua): deleted when the board or the
--          profile cache changes
-- KEYS[5]  the bracket's profiles as one string (see open_page.lua): deleted, with
--          the claim on it, when the profile cache changes once the meta flag
--          "texted" says there may be either
-- KEYS[6]  with a season's `[events]` only: the bracket's event log
-- ARGV[1]  bracket size; with `[events]`, "size|keep cap" (events.lua)
-- ARGV[2]  seconds the board lives at least (so a board the rollover never reaches
--          still expires)
-- ARGV[3..] one triple per player: player id, profile version, profile JSON (both ""
--          when the player's profile is not to be cached); with `[events]` a fourth,
--          the player.placed event, appended only for a player put on the board now
--
-- Reply: one of "ok" | "closed" | "full" | "banned|<marker>" per player, in order.
-- Players are entered in order, so when the board fills up within a call, the later
-- ones are "full". A player listed twice is entered once (both answered "ok"), the
-- newer profile kept.

-- Without `[events]` ARGV[1] is the size alone: one plain find, no pattern.
local size_arg, spec = ARGV[1], nil
local bar = string.find(size_arg, '|', 1, true)
if bar then
  size_arg, spec = string.sub(ARGV[1], 1, bar - 1), string.sub(ARGV[1], bar + 1)
end
local logged = spec ~= nil
local per = logged and 4 or 3
-- Player i's arguments are ARGV[base(i) + 1..per], base(i) = 2 + per * (i - 1),
-- computed in place (a function call a player costs more than the arithmetic).
local n = (#ARGV - 2) / per
local reply = {}
local fields = {'closed', 'paged', 'texted'}
for i = 1, n do
  fields[3 + i] = 'ban:' .. ARGV[2 + per * (i - 1) + 1]
end
local meta = redis.call('HMGET', KEYS[3], unpack(fields))
if meta[1] then
  for i = 1, n do
    reply[i] = 'closed'
  end
  return reply
end
if n < 1 then
  return reply
end

local size = tonumber(size_arg)
local players = {}
for i = 1, n do
  players[i] = ARGV[2 + per * (i - 1) + 1]
end
local placed = {}
local scores = redis.call('ZMSCORE', KEYS[1], unpack(players))
local card = redis.call('ZCARD', KEYS[1])
local on_board = {}
local add = {}
for i = 1, n do
  local player = players[i]
  if meta[3 + i] then
    -- A ban marker (ban_bracket.lua): never put back on the board; the engine asks the
    -- ban record whether the ban still holds.
    reply[i] = 'banned|' .. meta[3 + i]
  elseif scores[i] or on_board[player] then
    on_board[player] = true
    reply[i] = 'ok'
  elseif card >= size then
    reply[i] = 'full'
  else
    -- The never-scored packed value is 0 (see src/season/packing.rs), stored as "0".
    add[#add + 1] = '0'
    add[#add + 1] = player
    card = card + 1
    on_board[player] = true
    reply[i] = 'ok'
    if logged then
      placed[#placed + 1] = ARGV[2 + per * (i - 1) + 4]
    end
  end
end
local changed = #add > 0
if changed then
  redis.call('ZADD', KEYS[1], unpack(add))
  if logged then
    append_events(6, spec, placed)
  end
end

-- Profiles of the players on the board: written when newer than the cached one.
local asked = {}
local which = {}
for i = 1, n do
  if reply[i] == 'ok' and ARGV[2 + per * (i - 1) + 2] ~= '' then
    asked[#asked + 1] = players[i]
    which[#which + 1] = i
  end
end
if #asked > 0 then
  local cached = redis.call('HMGET', KEYS[2], unpack(asked))
  local newest = {}
  local order = {}
  for k = 1, #asked do
    local player = asked[k]
    local given = ARGV[2 + per * (which[k] - 1) + 2]
    local version = tonumber(given)
    local have = newest[player]
    if not have then
      local c = cached[k]
      have = { version = c and tonumber(string.match(c, '^(%d+) ')) }
    end
    if not have.version or have.version < version then
      if not have.record then
        order[#order + 1] = player
      end
      -- The version as given (decimal text), not reformatted from a double.
      have = { version = version, record = given .. ' ' .. ARGV[2 + per * (which[k] - 1) + 3] }
    end
    newest[player] = have
  end
  local set = {}
  for _, player in ipairs(order) do
    set[#set + 1] = player
    set[#set + 1] = newest[player].record
  end
  if #set > 0 then
    redis.call('HSET', KEYS[2], unpack(set))
    changed = true
    if meta[3] then
      redis.call('DEL', KEYS[5])
      redis.call('HDEL', KEYS[3], 'texted')
    end
  end
end

for i = 1, 2 do
  if redis.call('TTL', KEYS[i]) == -1 then
    redis.call('EXPIRE', KEYS[i], ARGV[2])
  end
end
if changed and meta[2] then
  redis.call('DEL', KEYS[4])
  redis.call('HDEL', KEYS[3], 'paged')
end
return reply
