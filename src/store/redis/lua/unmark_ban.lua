-- unmark_ban.lua: deletes a ban marker from a period's or a bracket's meta: only if
-- it equals ARGV[2] when that is given (a marker of a newer ban stays), always when
-- ARGV[2] is "". Idempotent.
--
-- KEYS[1]  the meta (hash); ARGV[1] player id; ARGV[2] the marker expected, or ""
--
-- Reply: 1 if a marker was deleted, else 0

local field = 'ban:' .. ARGV[1]
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], field) ~= ARGV[2] then
  return 0
end
return redis.call('HDEL', KEYS[1], field)
