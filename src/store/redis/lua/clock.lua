-- clock.lua: the league clock, the one rule by which every script tells the time.
-- Included by: adjust, begin_close, claim_bracket, join, update, record_state, set_profile,
-- snapshot (assembled in front of them by src/store/redis/scripts.rs).
--
-- Whether a period has started, accepts an event or may close is decided by one clock
-- that every process shares: this server's (TIME), or the league clock a store was
-- given (src/store/redis/clocked.rs), which the caller then sends as an argument.
-- TIME is read only where an argument does not give the time (record_state.lua and
-- set_profile.lua read it anyway: their pruning draws on its microseconds).

-- server_time(): this server's clock (TIME) as two numbers, unix seconds and the
-- microseconds within that second.
local function server_time()
  local t = redis.call('TIME')
  return tonumber(t[1]), tonumber(t[2])
end

-- clock_ms(given): the league clock in unix milliseconds: `given` (an argument,
-- unix ms) unless it is "" or "+N"; else this server's, plus N ms for "+N" (the
-- staging clock of a season with [clock] travel = true: the offset is kept in the
-- season's slot, which a script on a bracket's or period's slot cannot read on a
-- cluster, so the caller reads it and sends it).
local function clock_ms(given)
  local offset = 0
  if string.sub(given, 1, 1) == '+' then
    offset = tonumber(string.sub(given, 2))
  elseif given ~= '' then
    return tonumber(given)
  end
  local s, us = server_time()
  return s * 1000 + math.floor(us / 1000) + offset
end

-- clock_s(given, s): the league clock in unix seconds, by which records' deadlines
-- are judged: `given` (an argument, unix seconds) when it is a number, else this
-- server's: `s` when the caller has read it (server_time), else read here.
local function clock_s(given, s)
  local now = tonumber(given)
  if not now then
    now = s or server_time()
  end
  return now
end

-- too_soon(given, at): {"not_yet", ms to wait} while the league clock (clock_ms of
-- `given`) is before `at` (an argument, unix ms), else nil. Nothing closes before its
-- time: a script that closes returns this answer, before it writes anything.
local function too_soon(given, at)
  local now = clock_ms(given)
  if now < tonumber(at) then
    return {'not_yet', string.format('%.0f', tonumber(at) - now)}
  end
  return nil
end
