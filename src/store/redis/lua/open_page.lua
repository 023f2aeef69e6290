-- open_page.lua: the first step of a standings page built in the client: the
-- board's count and, when there is a board, a claim to keep the page once built.
--
-- The store runs it inside MULTI with the page's reads (ZRANGE WITHSCORES of the
-- board, HSCAN of the profile cache), so the claim and the data are one atomic
-- snapshot. The claim is a nonce in the page cache under "?first:last". Every script
-- that changes what a page shows (update.lua, enter.lua, cache_profile.lua) deletes
-- the page cache, claims included, once the meta flag "paged" (set here, in the same
-- step) says there may be pages. So keep_page.lua finds the nonce only if nothing a
-- page shows has changed since the snapshot, and only then keeps the page: a write
-- between the read and the fill can never leave a stale page.
--
-- Kept pages are read with a plain HGET, which cannot compare a page with its board,
-- so the page cache never outlives the board: its expiry is the keep time or the
-- board's, whichever comes first (finish_bracket.lua, which sets the board's
-- retention, shortens it again if need be).
--
-- KEYS[1]  bracket board (zset)
-- KEYS[2]  bracket page cache (hash: "first:last" -> page, "?first:last" -> claim)
-- KEYS[3]  bracket meta (hash: field "paged" says the page cache may hold pages)
-- ARGV[1]  the claim's field, "?first:last"
-- ARGV[2]  the claim's nonce (unique to this build)
-- ARGV[3]  ms a page stays kept at most (> 0)
--
-- Reply: the board's count (integer). No claim is made for a board that does not
-- exist, so reading brackets nobody joined writes nothing.

local total = redis.call('ZCARD', KEYS[1])
if total == 0 then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[2]) < 0 then
  local keep = tonumber(ARGV[3])
  if left > 0 and left < keep then
    keep = left
  end
  redis.call('PEXPIRE', KEYS[2], keep)
end
-- A meta hash created here takes the board's expiry (the rollover later sets both).
if redis.call('HSETNX', KEYS[3], 'paged', '1') == 1
    and left > 0 and redis.call('PTTL', KEYS[3]) == -1 then
  redis.call('PEXPIRE', KEYS[3], left)
end
return total
