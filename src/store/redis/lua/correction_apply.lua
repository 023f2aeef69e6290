-- correction_apply.lua: record the outcomes of one version of a bracket's
-- correction ("apply"), or mark its every step done ("finish"). A version's outcomes
-- are recorded once, and never after a later version's: concurrent re-settlements of
-- different versions end with the latest. The outcomes keep their expiry.
--
-- KEYS[1]  correction record (hash: "applied", "done", "m:<player>")
-- KEYS[2]  outcomes (string; see src/store/redis/outcomes.rs)
-- ARGV[1]  "apply" | "finish"
-- ARGV[2]  the version
-- ARGV[3]  ("apply") every outcome of the version, encoded
-- ARGV[4...]  ("apply") pairs: a corrected player, the version that last changed them
-- KEYS[3], ARGV[4]  ("apply", with a season's `[events]` only) the bracket's event log
--          and its spec; the pairs then start at ARGV[5] and are triples, each with
--          the player's player.resettled event, appended when the player's version is
--          newer than the one recorded before (events.lua)
--
-- Reply: 1 if written now, 0 if not (a record without that version, or a version
-- already recorded)

local record = KEYS[1]
local exists = redis.call('EXISTS', record)
if exists == 0 then
  return 0
end
local version = tonumber(ARGV[2])
if ARGV[1] == 'finish' then
  if tonumber(redis.call('HGET', record, 'done') or '0') < version then
    redis.call('HSET', record, 'done', version)
    return 1
  end
  return 0
end
local before = tonumber(redis.call('HGET', record, 'applied') or '0')
if before >= version then
  return 0
end
redis.call('SET', KEYS[2], ARGV[3], 'KEEPTTL')
redis.call('HSET', record, 'applied', version)
local first, step = 4, 2
if KEYS[3] then
  first, step = 5, 3
end
local bodies = {}
for i = first, #ARGV, step do
  redis.call('HSET', record, 'm:' .. ARGV[i], ARGV[i + 1])
  if KEYS[3] and tonumber(ARGV[i + 1]) > before then
    bodies[#bodies + 1] = ARGV[i + 2]
  end
end
if KEYS[3] then
  append_events(3, ARGV[4], bodies)
end
return 1
