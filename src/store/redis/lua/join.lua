-- join.lua: place players in brackets of their tiers for one period, each once.
--
-- The time rules, the check, the counter increment and the assignment run as one
-- atomic step, so two concurrent joins of one player can never give them two
-- brackets, the per-(period, tier) counter never counts a player twice, and no join
-- lands in a period the league clock has not opened or has closed.
--
-- One call places any number of players of the period (the bulk path sends a batch's
-- players at once, the single path one): the clock, the closing mark and each tier's
-- counter are read and moved once per call, not once per player, since Redis 7 costs
-- about a microsecond per redis.call. New players of a tier are counted in the order
-- given, so they get the same brackets as one call each would have given them.
--
-- KEYS[1]  period joins hash: tier -> players joined so far (the bracket counter);
--          with reserved late seats that is the early counter, and "tier:n" holds the
--          number of early brackets (fixed by the tier's first late join), "tier:late"
--          the late counter (the rule: src/season/seats.rs)
-- KEYS[2]  period meta hash:   field "closing" refuses new joins; field
--          "ban:<player>" ("since|until", ms, until "" for none) refuses the player's
--          placement until then (written by ban_period.lua)
-- KEYS[2+i] player i's assign bucket of the period (hash: player -> "tier:bracket";
--          one of 16,384 in the period's slot, see src/store/keys.rs)
-- ARGV[1]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[2]  seconds the period's keys live at least (a period the rollover never
--          reaches still expires; finish_period.lua sets the closed period's TTL)
-- ARGV[3]  the period's start, ARGV[4] when it stops accepting events (end + skew),
--          ARGV[5] the allowed skew (all ms): one period's, shared by every join of
--          the call (sent once, not once per join: each argument costs Redis its
--          parsing and its push into Lua, and a 13-digit number its strtod)
-- ARGV[6]  bracket size (>= 1), shared by every join of the call; with reserved late
--          seats "size/early_cap/late_from": brackets fill to early_cap until the
--          league clock reaches late_from (ms), then late joiners top them up to size
-- ARGV[7]  "" or a bracket the player is assigned to but that was found full (the
--          server lost data under running game servers): assign the player anew,
--          past it, in the tier they were placed in; such a join must be the only
--          one of its call. "bracket+skip" also passes the skip brackets after it.
-- ARGV[8..] three per player i, from ARGV[8 + 3(i-1)]: player id; tier name (never
--          contains ':', so the assignment splits on the last ':'); the join's time
--          (ms)
--
-- Reply: one per player, in order (all strings), or {"malformed", what} for the call:
--   "new:tier:bracket" | "existing:tier:bracket" (one string) | {"closed"}
--   | {"future", ms ahead, now} | {"not_yet", ms to wait} | {"banned", until ms or ""}
--   | {"malformed", what}

local now = clock_ms(ARGV[1])
local start, closes, skew = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local full, skip = string.match(ARGV[7], '^(%d+)%+(%d+)$')
if full then
  skip = tonumber(skip)
else
  full, skip = ARGV[7], 0
end
local size, cap, late_from = string.match(ARGV[6], '^(%d+)/(%d+)/(-?%d+)$')
if size then
  size, cap, late_from = tonumber(size), tonumber(cap), tonumber(late_from)
else
  size = tonumber(ARGV[6])
end

-- ceil(a / b) of integers well below 2^53, so the division is exact enough for
-- floor to be right.
local function ceil_div(a, b)
  return math.floor((a + b - 1) / b)
end

-- Late join number l (from 1) of a tier whose `early` early joins filled `fixed`
-- brackets: tops up the last early bracket to cap, then goes round the early
-- brackets one seat each, then opens new brackets of size (src/season/seats.rs,
-- TierJoins::late_bracket).
local function late_bracket(early, fixed, l)
  local top_up = math.max(fixed * cap - early, 0)
  if fixed > 0 and l <= top_up then
    return fixed
  end
  local k = l - math.min(top_up, l)
  local rounds = fixed * (size - cap)
  if fixed > 0 and k <= rounds then
    return (k - 1) % fixed + 1
  end
  return fixed + ceil_div(k - rounds, size)
end

-- A tier's late-seat counters: its early count and its fixed early brackets, fixing
-- them if the league clock has reached the late point (once fixed, the tier stays
-- late whatever the clock says). fixed is nil in the early phase.
local function phase(tier)
  local f = redis.call('HMGET', KEYS[1], tier, tier .. ':n')
  local early = tonumber(f[1] or '0')
  local fixed = f[2] and tonumber(f[2])
  if not fixed and now >= late_from then
    fixed = ceil_div(early, cap)
    redis.call('HSET', KEYS[1], tier .. ':n', fmt(fixed))
  end
  return early, fixed
end
local n = (#ARGV - 7) / 3
local reply = {}
-- A join past a full bracket is sent alone: counted among others of its tier, it
-- would have to see their placements before they are written.
if n > 1 and full ~= '' then
  return {'malformed', 'a join past a full bracket must be the only join of its call'}
end
local closing
-- The period meta's fields read with the closing mark: marks[i + 1] is player i's ban
-- marker (false: none).
local marks
-- A player listed twice gets the first listing's placement again, as a second call
-- would: placed_now maps a player to the first listing, again lists the repeats.
local placed_now = {}
local again = {}
-- Per tier, the new players waiting for their count: {i, ...}, in order; and the
-- tiers in the order they first appear.
local waiting = {}
local tiers = {}

for i = 1, n do
  local a = 7 + 3 * (i - 1)
  local player, tier, at = ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  if at > now + skew then
    reply[i] = {'future', fmt(at - now), fmt(now)}
  elseif now < start then
    reply[i] = {'not_yet', fmt(start - now)}
  elseif now >= closes then
    reply[i] = {'closed'}
  else
    if closing == nil then
      -- The closing mark and every player's ban marker (ban_period.lua), in one read.
      local fields = {'closing'}
      for j = 1, n do
        fields[j + 1] = 'ban:' .. ARGV[7 + 3 * (j - 1) + 1]
      end
      marks = redis.call('HMGET', KEYS[2], unpack(fields))
      closing = marks[1] ~= false
    end
    if closing then
      reply[i] = {'closed'}
    elseif placed_now[player] then
      -- Answered once the first is placed (below).
      again[#again + 1] = {i, placed_now[player]}
      reply[i] = false
    else
      local key = KEYS[2 + i]
      local placed = redis.call('HGET', key, player)
      local was, bracket
      if placed then
        was, bracket = string.match(placed, '^(.*):(%d+)$')
        if not was then
          reply[i] = {'malformed', 'assignment ' .. placed .. ' of ' .. key}
        elseif full == '' or bracket ~= full then
          reply[i] = {'existing', was, bracket}
          placed_now[player] = i
        end
      end
      if not reply[i] and not placed then
        -- A player the ban step found unplaced holds a marker "since|until" in the
        -- period's meta: refused until its end (none: "").
        local marker = marks[i + 1]
        if marker then
          local untl = string.match(marker, '|(%d*)$')
          if untl == nil or untl == '' or tonumber(untl) > now then
            reply[i] = {'banned', untl or ''}
          end
        end
      end
      if not reply[i] then
        if placed then
          -- Move the tier's counter past the full bracket, so this player and every
          -- later joiner land after it. (Such a join comes alone in its call: see
          -- the check at the top.)
          tier = was
          if not cap then
            local count = tonumber(redis.call('HGET', KEYS[1], tier) or '0')
            local past = (tonumber(bracket) + skip) * size
            if count < past then
              redis.call('HSET', KEYS[1], tier, fmt(past))
            end
          else
            -- TierJoins::pass: the early counter to the full bracket's end, or the
            -- late counter to a new bracket after it and the early brackets.
            local early, fixed = phase(tier)
            if not fixed then
              if early < (tonumber(bracket) + skip) * cap then
                redis.call('HSET', KEYS[1], tier, fmt((tonumber(bracket) + skip) * cap))
              end
            else
              local past = math.max(fixed * size - early, 0)
                + math.max(tonumber(bracket) + skip - fixed, 0) * size
              local late = tonumber(redis.call('HGET', KEYS[1], tier .. ':late') or '0')
              if late < past then
                redis.call('HSET', KEYS[1], tier .. ':late', fmt(past))
              end
            end
          end
        end
        local w = waiting[tier]
        if not w then
          w = {}
          waiting[tier] = w
          tiers[#tiers + 1] = tier
        end
        w[#w + 1] = i
        placed_now[player] = i
      end
    end
  end
end

-- The counts: one HINCRBY per tier for all its new players, in order.
for _, tier in ipairs(tiers) do
  local w = waiting[tier]
  local early, fixed
  if cap then
    early, fixed = phase(tier)
  end
  if fixed then
    local first = redis.call('HINCRBY', KEYS[1], tier .. ':late', #w) - #w
    for k, j in ipairs(w) do
      reply[j] = {'new', tier, fmt(late_bracket(early, fixed, first + k))}
    end
  else
    local first = redis.call('HINCRBY', KEYS[1], tier, #w) - #w
    local fill = cap or size
    for k, j in ipairs(w) do
      reply[j] = {'new', tier, fmt(ceil_div(first + k, fill))}
    end
  end
end
for _, r in ipairs(again) do
  local first = reply[r[2]]
  if first[1] == 'new' or first[1] == 'existing' then
    reply[r[1]] = {'existing', first[2], first[3]}
  else
    reply[r[1]] = first
  end
end

-- The assignments, each placement's answer as one string ("new:tier:bracket", not
-- a table: Redis turns each table of a script's reply into RESP by looking up six
-- special fields of it, err, ok, double, ..., about 5,000 instructions a table under
-- callgrind), and the expiry of every key this call created (by index into KEYS,
-- each key once: players of one call may share an assign bucket).
local expiring = {}
local wrote = false
for i = 1, n do
  local r = reply[i]
  if r[1] == 'new' then
    local key = KEYS[2 + i]
    local placed = r[2] .. ':' .. r[3]
    redis.call('HSET', key, ARGV[7 + 3 * (i - 1) + 1], placed)
    expiring[key] = 2 + i
    wrote = true
    reply[i] = 'new:' .. placed
  elseif r[1] == 'existing' then
    reply[i] = 'existing:' .. r[2] .. ':' .. r[3]
  end
end
if wrote then
  expiring[KEYS[1]] = 1
end
for _, k in pairs(expiring) do
  if redis.call('TTL', KEYS[k]) == -1 then
    redis.call('EXPIRE', KEYS[k], ARGV[2])
  end
end
return reply
