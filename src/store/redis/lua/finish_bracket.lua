-- finish_bracket.lua: record a closed bracket's outcomes once and let every key of
-- the bracket expire after the season's retention; and mark the bracket done
-- (outcomes recorded, rewards granted) with its tally, releasing the lease. The
-- rollover does both in one call ("both"), after the grants: a process killed before
-- it leaves the bracket unfinished, and the next run freezes the same board, finds
-- the same outcomes and grants nothing twice.
--
-- The outcomes are one string (see src/store/redis/outcomes.rs for its format), set
-- only if none is there: the first recorded outcomes stay. One string, not a hash of
-- a field per player: HSET of 100 new fields into a listpack scans it once per field
-- (about 54 us of Redis for 100 players), where SET of one value costs well under a
-- microsecond.
--
-- KEYS[1]  bracket meta (hash: "closed", "done" = tally)
-- KEYS[2]  bracket lease (not given an expiry here: it keeps its own short one, so a
--          process killed before the bracket is done does not block it for the whole
--          retention)
-- KEYS[3]  board, KEYS[4] cached profiles, KEYS[5] outcomes (string)
-- KEYS[6]  the page cache, whose expiry is only ever shortened here: kept pages are
--          read without looking at the board, so they must not outlive it (see
--          page_expiry.lua), nor be kept any longer than their own keep time
-- KEYS[7]  the profiles as one string (see open_page.lua), the same
-- ARGV[1]  "record" (the outcomes only), "finish" (the done mark only) or "both"
-- ARGV[2]  the tally ("finish", "both")
-- ARGV[3]  time to live, seconds ("record", "both")
-- ARGV[4]  the outcomes, encoded ("record", "both")
-- KEYS[8], ARGV[5], ARGV[6..]  with a season's `[events]` only ("both"): the
--          bracket's event log, its spec and the events of the close (bracket.closed
--          and each player's outcome), appended only by the call that records the
--          outcomes (events.lua), so a re-run of the close appends nothing
--
-- Reply: 1 | {"wrong_type", key, found, expected} (foreign_keys.lua): nothing written
--        but the caller's lease released

local mode = ARGV[1]
local checks = {{1, 'hash'}, {2, 'string'}, {5, 'string'}}
if KEYS[8] then
  checks[4] = {8, 'stream'}
end
local planted = foreign(checks)
if planted then
  -- The caller holds the lease (it froze the bracket) and stops here: released, so
  -- the retry of a later rollover need not wait for it to lapse.
  if planted[2] ~= KEYS[2] then
    redis.call('DEL', KEYS[2])
  end
  return planted
end
if mode ~= 'finish' then
  local recorded = redis.call('SET', KEYS[5], ARGV[4], 'NX')
  if recorded and KEYS[8] then
    append_events(8, ARGV[5], {unpack(ARGV, 6)})
  end
  -- The mark keeps the meta there to expire below, whatever came before, so the
  -- done mark never lands on a meta without an expiry.
  redis.call('HSETNX', KEYS[1], 'closed', '1')
end
if mode ~= 'record' then
  redis.call('HSETNX', KEYS[1], 'done', ARGV[2])
  redis.call('DEL', KEYS[2])
end
if mode ~= 'finish' then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  for i = 3, 5 do
    redis.call('EXPIRE', KEYS[i], ARGV[3])
  end
  -- The page cache and the profiles' string must not outlive the board by even a
  -- millisecond (page_expiry.lua).
  not_past(3, 6, 7)
end
return 1
