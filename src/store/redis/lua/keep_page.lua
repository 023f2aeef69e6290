-- keep_page.lua: keep a page built in the client, if its claim still stands.
--
-- open_page.lua made the claim in the same atomic step as the page's reads; any
-- change to what the page shows since then deleted the page cache and the claim with
-- it. So the page is kept only if it is still the page a build would give now.
-- Idempotent: a second run finds no claim and keeps nothing.
--
-- KEYS[1]  bracket page cache (hash)
-- ARGV[1]  the claim's field, "?first:last"
-- ARGV[2]  the claim's nonce
-- ARGV[3]  the page's field, "first:last"
-- ARGV[4]  the page (standings.lua's reply format)
--
-- Reply: 1 if the page was kept, 0 if the claim was gone or another build's.

if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
