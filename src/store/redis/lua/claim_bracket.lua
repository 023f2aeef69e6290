-- claim_bracket.lua: decide who closes a bracket, and (for the rollover) freeze it in
-- the same step. A finished bracket answers its tally; otherwise the caller gets (or
-- renews) a short lease unless another live process holds it. A dead holder's lease
-- expires and the next caller takes over. Nothing closes before its time by the
-- league clock: until then, nothing is written.
--
-- Freezing is closing the bracket to updates and reading its final board in the same
-- atomic step, so the board read is exactly the board that is kept. The rollover
-- claims and freezes in one call ("both"): one script and one round trip a bracket
-- fewer than a claim and then a freeze.
--
-- KEYS[1]  bracket meta (hash: "done" = tally, "closed")
-- KEYS[2]  bracket lease (string: owner, with a PX expiry)
-- KEYS[3]  bracket board (zset: player -> minus the packed score)
-- ARGV[1]  owner, ARGV[2] lease in milliseconds (both unused by "freeze")
-- ARGV[3]  the league clock, unix ms; "" to read this server's clock (TIME)
-- ARGV[4]  when the period may be closed (its end plus the allowed skew), unix ms
-- ARGV[5]  "claim" (the lease only), "freeze" (the board only) or "both"
--
-- Reply: {"done", tally} | {"busy"} | {"not_yet", ms to wait}
--        | {"wrong_type", key, found, expected} (nothing written; foreign_keys.lua)
--        | {"mine"} ("claim") | {"mine", board} ("both") | {"ok", board} ("freeze")
--        where board is ZRANGE WITHSCORES joined by the unit separator (byte 31), as
--        standings pages are: one string costs the client one allocation where an
--        array of 200 items cost 200 and redis-rs's parse of each (perf: about 12% of
--        the rollover's client time at 1M); no player id or score contains byte 31.

local mode = ARGV[5]
local planted = foreign({{1, 'hash'}, {2, 'string'}, {3, 'zset'}})
if planted then
  return planted
end
if mode ~= 'freeze' then
  local tally = redis.call('HGET', KEYS[1], 'done')
  if tally then
    return {'done', tally}
  end
end
local wait = too_soon(ARGV[3], ARGV[4])
if wait then
  return wait
end
local answer = 'ok'
if mode ~= 'freeze' then
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= ARGV[1] then
    return {'busy'}
  end
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  if mode == 'claim' then
    return {'mine'}
  end
  answer = 'mine'
end
redis.call('HSET', KEYS[1], 'closed', '1')
return {answer, table.concat(redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES'), '\31')}
