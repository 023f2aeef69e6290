-- deadlines.lua: the clock and the pruning of the per-player buckets' records, each
-- "deadline|..." (a hash's fields cannot expire, so each record carries its own
-- deadline, unix seconds; see record_state.lua).
-- Included by: record_state, set_profile (assembled in front of them, after
-- clock.lua, by src/store/redis/scripts.rs).

-- deadline_clock(given): now by the league clock, clock_s(given) (clock.lua), and
-- whether this call prunes: one call in 16, drawn from this server's microseconds, so
-- this server's clock is read either way.
local function deadline_clock(given)
  local s, us = server_time()
  return clock_s(given, s), us % 16 == 0
end

-- prune(i, now): bounded pruning of the bucket KEYS[i]: up to 16 of its records,
-- sampled, are deleted if past their deadline. Run on one call in 16, that is about
-- one record looked at per write. Sampling on every write cost three quarters of
-- record_state.lua's time on buckets of 60 players (HRANDFIELD WITHVALUES scans the
-- listpack and copies the values), and one sample per write keeps a bucket's dead
-- records to about the share of writes that are a player's last.
local function prune(i, now)
  local sample = redis.call('HRANDFIELD', KEYS[i], 16, 'WITHVALUES')
  for j = 1, #sample, 2 do
    local d = tonumber(string.match(sample[j + 1], '^(%d+)|'))
    if d and d <= now then
      redis.call('HDEL', KEYS[i], sample[j])
    end
  end
end
