-- record_outcomes.lua: record a closed bracket's outcomes once, and let every key
-- of the bracket expire after the season's retention.
--
-- KEYS[1] board, KEYS[2] cached profiles, KEYS[3] meta ("recorded"),
-- KEYS[4] outcomes (hash: player -> encoded outcome), KEYS[5] the page cache, whose
-- expiry is only ever shortened here: kept pages are read without looking at the
-- board, so they must not outlive it (see open_page.lua), nor be kept any longer
-- than their own keep time.
-- (Not the lease: it keeps its own short expiry, so a process killed before
-- finish_bracket does not block the bracket for the whole retention.)
-- ARGV[1]  time to live, seconds
-- ARGV[2..] player1, outcome1, player2, outcome2, ...
--
-- Reply: 1 if recorded now, 0 if it already was.

local recorded = 0
if redis.call('HSETNX', KEYS[3], 'recorded', '1') == 1 then
  -- HSET in chunks: unpack() of thousands of values would overflow Lua's C stack.
  local chunk = {}
  for i = 2, #ARGV do
    chunk[#chunk + 1] = ARGV[i]
    if #chunk == 1000 then
      redis.call('HSET', KEYS[4], unpack(chunk))
      chunk = {}
    end
  end
  if #chunk > 0 then
    redis.call('HSET', KEYS[4], unpack(chunk))
  end
  recorded = 1
end
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ARGV[1])
end
local left = redis.call('PTTL', KEYS[5])
if left == -1 or left > tonumber(ARGV[1]) * 1000 then
  redis.call('EXPIRE', KEYS[5], ARGV[1])
end
return recorded
