-- keep_page.lua: keep a page built in the client, if its claim still stands; and
-- the bracket's profiles as one string, if their claim still stands.
--
-- open_page.lua made the claims in the same atomic step as the page's reads; any
-- change to what the page shows since then deleted the page cache and the page's
-- claim with it, and any change to the profile cache deleted the "texted" claim. So
-- the page is kept only if it is still the page a build would give now, and the
-- string only if the profile cache still holds what it was made of. Idempotent: a
-- second run finds no claim and keeps nothing.
--
-- KEYS[1]  bracket page cache (hash)
-- KEYS[2..4] optional, with ARGV[5..6]: bracket meta (hash), the profiles' string,
--          bracket profile cache (hash: its expiry caps the string's)
-- ARGV[1]  the claim's field, "?first:last"
-- ARGV[2]  the claim's nonce
-- ARGV[3]  the page's field, "first:last" ("" to keep no page)
-- ARGV[4]  the page (standings.lua's reply format)
-- ARGV[5]  the profiles as one string (see open_page.lua)
-- ARGV[6]  ms the string is kept at most (> 0)
--
-- Reply: 1 if the page was kept, 0 if not (the claim was gone or another build's,
-- no page was given, or Redis refused the write for memory: see refused in cache_writes.lua).

local kept = 0
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  if refused(redis.pcall('HSET', KEYS[1], ARGV[3], ARGV[4])) then
    return 0
  end
  redis.call('HDEL', KEYS[1], ARGV[1])
  kept = 1
end
if KEYS[2] and redis.call('HGET', KEYS[2], 'texted') == ARGV[2] then
  local left = redis.call('PTTL', KEYS[4])
  if left ~= -2 then
    -- Kept no longer than the profile cache it was made of (page_expiry.lua).
    if refused(redis.pcall('SET', KEYS[3], ARGV[5], kept_for(4, left, ARGV[6]))) then
      return kept
    end
    redis.call('HSET', KEYS[2], 'texted', '1')
  end
end
return kept
