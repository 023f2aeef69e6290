-- correction_begin.lua: grow a closed bracket's exclusions by the players given, as a
-- new version of its correction record (with its time, actor and reason), copying the
-- outcomes as closed first (once). Nothing is written when the bracket is not closed,
-- when every player given is excluded already, or when the exclusions would cover
-- every player of the bracket. Idempotent: a repeat finds its players excluded.
--
-- KEYS[1]  bracket meta (hash: "done" once closed)
-- KEYS[2]  outcomes (string)
-- KEYS[3]  outcomes as closed (string)
-- KEYS[4]  correction record (hash: "v", and "x:<v>" the players version v
--          excluded, one per line, sorted; "at:<v>", "by:<v>", "why:<v>")
-- ARGV[1]  players on the closed board
-- ARGV[2]  time (unix ms), ARGV[3] actor, ARGV[4] reason
-- ARGV[5...]  the players to exclude (ids never hold a newline)
--
-- Reply: {"not_closed"} | {"everyone"} | {"ok", version, 1 if created now else 0}

if redis.call('HEXISTS', KEYS[1], 'done') == 0 then
  return {'not_closed'}
end
local record = KEYS[4]
local v = tonumber(redis.call('HGET', record, 'v') or '0')
local excluded = {}
local count = 0
for i = 1, v do
  local listed = redis.call('HGET', record, 'x:' .. i) or ''
  for id in string.gmatch(listed, '[^\n]+') do
    if not excluded[id] then
      excluded[id] = true
      count = count + 1
    end
  end
end
local fresh = {}
for i = 5, #ARGV do
  local id = ARGV[i]
  if not excluded[id] then
    excluded[id] = true
    fresh[#fresh + 1] = id
  end
end
if #fresh == 0 then
  return {'ok', v, 0}
end
if count + #fresh >= tonumber(ARGV[1]) then
  return {'everyone'}
end
table.sort(fresh)
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], redis.call('GET', KEYS[2]) or '')
end
v = v + 1
redis.call('HSET', record, 'v', v, 'x:' .. v, table.concat(fresh, '\n'),
  'at:' .. v, ARGV[2], 'by:' .. v, ARGV[3], 'why:' .. v, ARGV[4])
-- The record and the copy live as long as the outcomes (the season's retention).
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[3], ttl)
  redis.call('PEXPIRE', record, ttl)
end
return {'ok', v, 1}
