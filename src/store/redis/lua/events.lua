-- events.lua: append events to the script's event log, a stream in the script's own
-- slot (src/store/events.rs). Only a step that made a change appends, in the same
-- atomic step, so a retried or re-run step appends nothing twice.
-- Included by: claim_rewards, enter, finish_bracket, finish_period, grant (assembled
-- in front of them by src/store/redis/scripts.rs).

-- Appends `bodies` (events' JSON without their ids, in order) to the stream KEYS[k],
-- trimmed to about `spec`'s cap, and keeps the log `spec`'s keep seconds from now.
-- `spec` is "keep cap" (LogSpec::arg). Nothing when `bodies` is empty.
local function append_events(k, spec, bodies)
  if #bodies == 0 then
    return
  end
  local keep, cap = string.match(spec, '^(%d+) (%d+)$')
  for _, body in ipairs(bodies) do
    redis.call('XADD', KEYS[k], 'MAXLEN', '~', cap, '*', 'e', body)
  end
  redis.call('EXPIRE', KEYS[k], keep)
end
