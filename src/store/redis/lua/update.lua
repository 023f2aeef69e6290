-- update.lua: apply score updates to bracket boards, each with its idempotency check
-- and record and the league clock's rules in the same atomic step.
--
-- This is `Packing::apply` (src/season/packing.rs) in Lua and must stay exactly equal to it;
-- the conformance suite runs the same scenarios on both stores.
--
-- One call applies any number of updates of one season's period, in order: the store
-- gathers concurrent submits into one call (of any brackets on one server, of one
-- bracket on a cluster, where a script's keys share a slot), and a single update is
-- a call of one. Entering a script, the shared arguments and the clock are paid once
-- per call, not once per update. Each update is its own: one the server refuses
-- (WRONGTYPE on a key leaguekit did not write) is answered {"refused", error} in its
-- place, and the others go on.
--
-- Numbers: Lua 5.1 numbers are doubles. Every packed value is an integer at most
-- 2^53 - 1, so it is held exactly, but two things need care:
--   * the remainder is computed as p - q * span and checked, not trusted
--     (split_packed, numbers.lua);
--   * tostring() and implicit number-to-string conversion use "%.14g", which
--     loses digits above 1e14, so every number sent to Redis or returned goes
--     through fmt() (numbers.lua), exact for every integer.
-- Times are unix milliseconds (about 1.8e12), exact as doubles.
--
-- Shared by every update of the call:
-- ARGV[1]  mode: increment | best | set; followed, when the season has `[limits]`, by
--          " max_value max_period_score rate_count rate_window_ms" ("-" for a limit
--          not set: see `season/limits.rs`). Without limits nothing below reads them,
--          and an update runs no command for them. Then, when the season has
--          `[events] overtaken = true`, by "|keep cap" (the log's spec, events.lua);
--          without it nothing below logs, and an update runs no command for it.
-- ARGV[2]  max_score; -1 means no score is in range (the caller found the packing
--          parameters invalid, where the in-memory store refuses every update)
-- ARGV[3]  span (T)
-- ARGV[4]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[5]  the period's start, ARGV[6] when it stops accepting events (end + skew),
--          ARGV[7] the allowed skew (all ms)
--
-- Per update i, four keys from KEYS[4(i-1) + 1] (five with a rate limit: the fifth
-- is the bracket's rate hash; one more, the last, with overtaken events: the
-- bracket's event log) and seven arguments from ARGV[7 + 7(i-1) + 1] (nine with
-- overtaken events):
-- KEYS  bracket board (zset: player -> minus the packed score); bracket meta (hash:
--       field "closed" marks a closed bracket, "paged" that the page cache may hold
--       pages); bracket page cache (see open_page.lua), deleted when the board
--       changes; the idempotency key of (player, request id), or any key of the
--       bracket when the update has no request id (it is then not touched)
-- ARGV  player id; value (integer; the caller clamps it to +-2^53, which changes no
--       outcome); tick (the caller clamps it to span - 2, as Packing::apply does);
--       "" when the update has no request id, else the idempotency window in seconds
--       (0: answer a request id seen before, but do not remember this one); attempt
--       token (identifies this update across client-side retries); the event's time;
--       "1" to answer the rank after the update, "" not to (ZRANK scans the board's
--       listpack from the top: 12% of an update's instructions, a few per cent of its
--       time at a million players, where the update's cold keys cost more);
--       with overtaken events, the `player.overtaken` body up to the passed player's
--       id and from after it up to their rank (src/store/events.rs, `Overtakes`)
--
-- Overtaken events: an applied update that moves its player up logs one event per
-- player it passed (those now just below it that were above it), in rank order, each
-- with that player's new rank (1-based). A player who never scored (packed 0) is
-- passed by anyone's first score and is not told. Costs, only with them on: a ZRANK
-- before the ZADD of an update that moves its player up, a ZRANK after (unless the
-- rank is asked for) and a ZRANGE of the players passed, with an XADD for each.
--
-- Reply: one per update, in order (all strings; rank "" when not asked for, and for
-- a duplicate when the first answer had none):
--   {"duplicate", packed, rank, token}   the first answer to this request id
--   {"future", ms ahead, now}            the event is beyond now + skew
--   {"not_yet", ms to wait}              the period has not started
--   {"closed", "0", "0"}                 the bracket or period is closed
--   {"not_placed"}                       the player is not on this board
--   {"out_of_range", current packed, "0"}
--   {"limited", limit, retry ms, current packed}   beyond a limit (nothing written)
--   "packed:rank"                        applied (one string: the common answer)
--   {"malformed", what}                  data this script did not write
--   {"refused", error}                   the server refused a command of the update

local mode = ARGV[1]
-- The event log's spec when updates log overtaken events (nil: they do not).
local overtakes
do
  local bar = string.find(mode, '|', 1, true)
  if bar then
    overtakes = string.sub(mode, bar + 1)
    mode = string.sub(mode, 1, bar - 1)
  end
end
-- The season's limits, if any (nil: none, the common case).
local limits
do
  local m, value, score, count, window =
    string.match(mode, '^(%a+) (%S+) (%S+) (%S+) (%S+)$')
  if m then
    mode = m
    limits = {value = tonumber(value), score = tonumber(score),
              count = tonumber(count), window = tonumber(window)}
  end
end
-- Keys per update: a rate limit adds the bracket's rate hash, overtaken events the
-- bracket's event log (the last); arguments per update: those events add two.
local per = (limits and limits.count) and 5 or 4
local stride = 7
if overtakes then
  per = per + 1
  stride = 9
end
local max = tonumber(ARGV[2])
local span = tonumber(ARGV[3])
local start = tonumber(ARGV[5])
local closes = tonumber(ARGV[6])
local skew = tonumber(ARGV[7])
-- The league clock (clock.lua) is read at most once a call, and only if an update
-- needs it.
local now
local function clock()
  if not now then
    now = clock_ms(ARGV[4])
  end
  return now
end

-- The first answer kept in an idempotency record, or nil when there is none.
local function answer_of(rq, seen)
  if not seen then
    return nil
  end
  local packed, rank, token = string.match(seen, '^(%d+):(%d*):?(.*)$')
  if not packed then
    return {'malformed', 'idempotency record ' .. seen .. ' at ' .. rq}
  end
  return {'duplicate', packed, rank, token}
end

-- `reply`, unless the idempotency record `ask` (nil: none to look up) holds a first
-- answer: then that one.
local function unless_seen(ask, reply)
  if ask then
    local first = answer_of(ask, redis.call('GET', ask))
    if first then
      return first
    end
  end
  return reply
end

-- Update i's keys are KEYS[k + 1..per] and its arguments ARGV[a + 1..stride]:
-- k = per(i-1), a = 7 + stride(i-1).
local function update(k, a)
  local player = ARGV[a + 1]
  local window = ARGV[a + 4]
  -- A retry is answered as the first time was, even once the period has closed.
  -- The idempotency record is looked up once. An update that applies checks for it
  -- and writes it in one SET NX GET (below); every other answer goes through
  -- unless_seen first, so a request id seen before is always answered "duplicate".
  -- `ask` is the record still to look up (nil: none, or already read).
  local ask = KEYS[k + 4]
  if window == '' then
    ask = nil
  elseif window == '0' then
    -- A window of 0 reads the record but never writes it: read it now.
    local first = answer_of(ask, redis.call('GET', ask))
    if first then
      return first
    end
    ask = nil
  end

  local now = clock()
  local at = tonumber(ARGV[a + 6])
  if at > now + skew then
    return unless_seen(ask, {'future', fmt(at - now), fmt(now)})
  end
  if now < start then
    return unless_seen(ask, {'not_yet', fmt(start - now)})
  end
  if now >= closes then
    return unless_seen(ask, {'closed', '0', '0'})
  end

  local meta = redis.call('HMGET', KEYS[k + 2], 'closed', 'paged')
  if meta[1] then
    return unless_seen(ask, {'closed', '0', '0'})
  end

  -- Only a join puts a player on a board: an update for a player who is not there
  -- comes from a stale placement (or a server that lost its data), and must not grow
  -- the board past its size or create a board the rollover never finds.
  local raw = redis.call('ZSCORE', KEYS[k + 1], player)
  if not raw then
    return unless_seen(ask, {'not_placed'})
  end
  local packed = board_packed(raw)
  if not packed then
    return unless_seen(ask, {'malformed', 'score ' .. raw .. ' of ' .. player .. ' in ' .. KEYS[k + 1]})
  end

  if max < 0 then
    return unless_seen(ask, {'out_of_range', fmt(packed), '0'})
  end

  local score, rev = split_packed(packed, span)

  local value = tonumber(ARGV[a + 2])
  local result
  if mode == 'increment' then
    result = score + value
  elseif mode == 'best' then
    if value < 0 or value > max then
      result = value
    elseif value > score then
      result = value
    else
      result = score
    end
  elseif mode == 'set' then
    result = value
  else
    return {'malformed', 'unknown score mode ' .. mode}
  end

  if result < 0 or result > max then
    return unless_seen(ask, {'out_of_range', fmt(packed), '0'})
  end

  -- The season's limits (`season/limits.rs`), in its order. The rate is a GCRA whose
  -- "theoretical arrival time" per player is kept in units of 1/count ms from the
  -- period's start (every number an exact integer), in the bracket's rate hash; the
  -- hash lives a window past its last write, when every time in it is past.
  local tat
  if limits then
    if limits.value and math.abs(value) > limits.value then
      return unless_seen(ask, {'limited', 'max_value', '0', fmt(packed)})
    end
    if limits.score and result > limits.score then
      return unless_seen(ask, {'limited', 'max_period_score', '0', fmt(packed)})
    end
    if limits.count then
      local w = limits.window
      local t = clock() - start
      if t < 0 then
        t = 0
      end
      t = t * limits.count
      tat = tonumber(redis.call('HGET', KEYS[k + 5], player) or '0')
      if tat < t then
        tat = t
      end
      tat = tat + w
      local over = tat - t - w * limits.count
      if over > 0 then
        return unless_seen(ask, {'limited', 'rate', fmt(math.ceil(over / limits.count)), fmt(packed)})
      end
    end
  end

  local tick = tonumber(ARGV[a + 3])
  if tick > span - 2 then
    tick = span - 2
  end

  -- An unchanged score keeps the time it was reached; a never-scored entry (rev 0)
  -- takes the event's time even when its score stays 0.
  local newrev
  if result == score and rev ~= 0 then
    newrev = rev
  else
    newrev = span - 1 - tick
  end
  local newpacked = result * span + newrev

  -- The board stores minus the packed value, written from its printed form (one
  -- string.format, not two); 0 as "0", never "-0".
  local out_packed = fmt(newpacked)
  -- The player's place before, when they move up and passed players are told.
  local was
  if overtakes and newpacked > packed then
    was = redis.call('ZRANK', KEYS[k + 1], player)
  end
  redis.call('ZADD', KEYS[k + 1], newpacked == 0 and '0' or '-' .. out_packed, player)
  local out_rank = ''
  if ARGV[a + 7] ~= '' then
    out_rank = fmt(redis.call('ZRANK', KEYS[k + 1], player))
  end
  if ask then
    -- The record's check and write in one command. A record found means this
    -- update is a retry: put the board back exactly as it was (the old score; equal
    -- scores order by member, so in the same place too) and answer the first time's
    -- answer. The same for a key leaguekit did not write (refused, or a malformed
    -- record): nothing of the update stays.
    local first = redis.pcall('SET', ask,
      out_packed .. ':' .. out_rank .. ':' .. ARGV[a + 5], 'EX', window, 'NX', 'GET')
    if first then
      redis.call('ZADD', KEYS[k + 1], raw, player)
      if type(first) == 'table' then
        error(first)
      end
      return answer_of(ask, first)
    end
  end
  if newpacked ~= packed and meta[2] then
    redis.call('DEL', KEYS[k + 3])
    redis.call('HDEL', KEYS[k + 2], 'paged')
  end
  if tat then
    redis.call('HSET', KEYS[k + 5], player, fmt(tat))
    redis.call('PEXPIRE', KEYS[k + 5], limits.window + 60000)
  end
  if was then
    -- Applied (a retry returned above): the players now between the player's new
    -- place and their old one were passed.
    local place = out_rank ~= '' and tonumber(out_rank) or redis.call('ZRANK', KEYS[k + 1], player)
    if place < was then
      local passed = redis.call('ZRANGE', KEYS[k + 1], place + 1, was, 'WITHSCORES')
      local bodies = {}
      for j = 1, #passed, 2 do
        if passed[j + 1] ~= '0' then
          bodies[#bodies + 1] = ARGV[a + 8] .. json_text(passed[j]) .. ARGV[a + 9]
            .. fmt(place + 1 + (j + 1) / 2) .. '}}'
        end
      end
      append_events(k + per, overtakes, bodies)
    end
  end
  -- The hot answer as one string, not a table: Redis turns each table of a script's
  -- reply into RESP by looking up six special fields of it (err, ok, double, ...):
  -- about 5,000 instructions, 4% of an update, under callgrind.
  return out_packed .. ':' .. out_rank
end

-- One update's failure (a command refused) is that update's answer, {"refused",
-- error}, in its place; the others go on. Not an error reply inside the array: a
-- client may (redis-rs does) turn an array holding one into an error for the whole
-- call, which would report the applied updates of the call as refused.
local function each(k, a)
  local ok, answer = pcall(update, k, a)
  if ok then
    return answer
  end
  if type(answer) == 'table' and answer.err then
    return {'refused', answer.err}
  end
  return {'refused', tostring(answer)}
end

local reply = {}
for i = 1, #KEYS / per do
  reply[i] = each(per * (i - 1), 7 + stride * (i - 1))
end
return reply
