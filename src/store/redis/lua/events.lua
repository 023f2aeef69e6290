-- events.lua: append events to the script's event log, a stream in the script's own
-- slot (src/store/events.rs). Only a step that made a change appends, in the same
-- atomic step, so a retried or re-run step appends nothing twice.
-- Included by: enter, finish_bracket, finish_period, grant, claim_rewards, update,
-- adjust, correction_apply (assembled in front of them by src/store/redis/scripts.rs).

-- Appends `bodies` (events' JSON without their ids, in order) to the stream
-- KEYS[n], trimmed to about `spec`'s cap, and keeps the log `spec`'s keep seconds
-- from now. `spec` is "keep cap" (LogSpec::arg). Nothing when `bodies` is empty.
local function append_events(n, spec, bodies)
  if #bodies == 0 then
    return
  end
  local log = KEYS[n]
  local keep, cap = string.match(spec, '^(%d+) (%d+)$')
  for _, body in ipairs(bodies) do
    redis.call('XADD', log, 'MAXLEN', '~', cap, '*', 'e', body)
  end
  redis.call('EXPIRE', log, keep)
end

-- A character JSON must escape, escaped as serde_json does: '"' and '\' with a
-- backslash, control characters by their short escape or \u00xx.
local function json_escape(c)
  if c == '"' or c == '\\' then
    return '\\' .. c
  end
  local b = string.byte(c)
  if b == 8 then
    return '\\b'
  elseif b == 9 then
    return '\\t'
  elseif b == 10 then
    return '\\n'
  elseif b == 12 then
    return '\\f'
  elseif b == 13 then
    return '\\r'
  end
  return string.format('\\u%04x', b)
end

-- `s` as a JSON string, byte for byte as serde_json writes it (the in-memory store
-- writes the same events with it): only '"', '\' and control characters escaped, not
-- '/' (which cjson escapes) nor any other byte.
local function json_text(s)
  return '"' .. string.gsub(s, '[%z\1-\31"\\]', json_escape) .. '"'
end
