-- freeze.lua: close a bracket to updates and read its final board in the same
-- atomic step, so the board read is exactly the board that is kept. Nothing closes
-- before its time by the league clock: until then, nothing is written.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket meta (hash: "closed")
-- ARGV[1]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[2]  when the period may be closed (its end plus the allowed skew), unix ms
--
-- Reply: {"ok", "player1 score1 player2 score2 ..."}: ZRANGE WITHSCORES joined by
--        the unit separator (byte 31), as standings pages are: one string costs the
--        client one allocation where an array of 200 items cost 200 and redis-rs's
--        parse of each (perf: about 12% of the rollover's client time at 1M); no
--        player id or score contains byte 31
--        | {"not_yet", ms to wait}

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if now < tonumber(ARGV[2]) then
  return {'not_yet', string.format('%.0f', tonumber(ARGV[2]) - now)}
end
redis.call('HSET', KEYS[2], 'closed', '1')
return {'ok', table.concat(redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'), '\31')}
