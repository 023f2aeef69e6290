-- correction_read.lua: what a bracket's slot holds about its re-settlement, read in
-- one step: whether the bracket is done, its outcomes as recorded now, its outcomes
-- as it closed (copied before the first correction) and its correction record.
--
-- KEYS[1]  bracket meta (hash: "done" once closed)
-- KEYS[2]  outcomes (string; see src/store/redis/outcomes.rs)
-- KEYS[3]  outcomes as closed (string, the same format)
-- KEYS[4]  correction record (hash; see BracketKeys::correction)
--
-- Reply: {done 0|1, outcomes or "", has original 0|1, original or "", {field, value...}}

local done = redis.call('HEXISTS', KEYS[1], 'done')
local out = redis.call('GET', KEYS[2])
local orig = redis.call('GET', KEYS[3])
local record = redis.call('HGETALL', KEYS[4])
local has = 0
if orig then
  has = 1
end
return {done, out or '', has, orig or '', record}
