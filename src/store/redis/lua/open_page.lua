-- open_page.lua: the first step of a standings page built in the client: the
-- board's count and, when there is a board, a claim to keep the page once built;
-- and the bracket's profiles as one string, or a claim to keep them so.
--
-- The store runs it inside MULTI with the page's reads (ZRANGE WITHSCORES of the
-- board, HSCAN of the profile cache or GET of the profiles' string below), so the
-- claims and the data are one atomic snapshot. The claim is a nonce in the page cache
-- under "?first:last". Every script that changes what a page shows (update.lua,
-- enter.lua, cache_profile.lua) deletes the page cache, claims included, once the
-- meta flag "paged" (set here, in the same step) says there may be pages. So
-- keep_page.lua finds the nonce only if nothing a page shows has changed since the
-- snapshot, and only then keeps the page: a write between the read and the fill can
-- never leave a stale page.
--
-- The profiles as one string: a page built in the client decodes every item of its
-- replies, and for the client that is most of a build's cost; the profile cache as
-- HSCAN answers it is 200 items for a bracket of 100, more than the board. A score
-- update changes the board, not the profiles, so the profiles are also kept as one
-- string (KEYS[4]), which update.lua leaves alone: a build after a score update reads
-- them as one item, and Redis answers a GET instead of an HSCAN that copies 200
-- strings. The GET is the MULTI's, not this script's, so the string never passes
-- through Lua. When there is none, the nonce is also put in the meta under
-- "texted", and the store reads the profile cache with HSCAN and asks keep_page.lua
-- to keep the string too. enter.lua and cache_profile.lua delete the string and the "texted"
-- claim with every change to the profile cache, so the string is kept only if the
-- profiles it was made of are still the cache's.
--
-- Kept pages are read with a plain HGET, which cannot compare a page with its board,
-- so the page cache never outlives the board: see page_expiry.lua. The same for the
-- profiles' string.
--
-- KEYS[1]  bracket board (zset)
-- KEYS[2]  bracket page cache (hash: "first:last" -> page, "?first:last" -> claim)
-- KEYS[3]  bracket meta (hash: field "paged" says the page cache may hold pages,
--          "texted" that the profiles' string or a claim on it may exist)
-- KEYS[4]  optional: the bracket's profiles as one string
-- ARGV[1]  the claim's field, "?first:last"
-- ARGV[2]  the claim's nonce (unique to this build)
-- ARGV[3]  ms a page stays kept at most (> 0)
--
-- Reply: the board's count (integer). No claim is made for a board that does not
-- exist, so reading brackets nobody joined writes nothing; nor when Redis refuses
-- writes for memory (see refused in cache_writes.lua): the page is built and answered, not kept.

local total = redis.call('ZCARD', KEYS[1])
if total == 0 then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
if refused(redis.pcall('HSET', KEYS[2], ARGV[1], ARGV[2])) then
  return total
end
keep_new(2, 1, left, ARGV[3])
mark_paged(3, 1, left)
if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 0 then
  redis.call('HSET', KEYS[3], 'texted', ARGV[2])
end
return total
