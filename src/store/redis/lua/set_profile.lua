-- set_profile.lua: set and remove profile fields (on the stored profile, or on an
-- empty one to replace it), check the new size and write, in one atomic step, so
-- concurrent edits can never together exceed max_bytes.
--
-- The size is that of the profile as JSON, byte for byte what serde_json writes for
-- a map of strings (src/store/types.rs `profile_json`): fields in the given order,
-- `"` and `\` escaped, \b \f \n \r \t by name, other bytes below 0x20 as \u00xx, and
-- everything else (DEL and UTF-8 included) as it is.
--
-- The profile is one record of the player's bucket: "deadline|version|json", where
-- json holds the season's fields in the given order and then any other stored field
-- (of a field the season has since dropped), sorted. The deadline (unix seconds by
-- this server's clock, or by the clock given in ARGV[4]) is raised to now + ttl,
-- never lowered; a record past its deadline counts as absent (see record_state.lua).
--
-- KEYS[1]  profile bucket (hash: player -> "deadline|version|json")
-- ARGV[1]  player id
-- ARGV[2]  max_bytes
-- ARGV[3]  seconds the profile lives at least
-- ARGV[4]  now in unix seconds by the clock that judges deadlines, or "" for TIME
-- ARGV[5]  n: how many field names follow (the season's fields, sorted)
-- ARGV[6..5+n]  field names
-- ARGV[6+n]     "merge" (start from the stored profile) or "replace" (from an empty one)
-- ARGV[7+n..]   op, field, value, ...: "set" field value, or "del" field "" (in order)
--
-- Reply: {"ok", version, json} | {"too_large", bytes} | {"malformed", what}

local names = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}
local function esc(s)
  return (string.gsub(s, '[%z\1-\31"\\]', function(c)
    return names[c] or string.format('\\u%04x', string.byte(c))
  end))
end

local now, pruning = deadline_clock(ARGV[4])
local ttl = tonumber(ARGV[3])
local player = ARGV[1]

local stored = {}
local version = 0
local deadline = now + ttl
local record = redis.call('HGET', KEYS[1], player)
if record then
  local d, v, json = string.match(record, '^(%d+)|(%d+)|(.*)$')
  local ok, decoded = false, nil
  if d then
    ok, decoded = pcall(cjson.decode, json)
  end
  if not ok or type(decoded) ~= 'table' then
    return {'malformed', 'profile of ' .. player .. ' in ' .. KEYS[1] .. ': ' .. record}
  end
  if tonumber(d) > now then
    for k, value in pairs(decoded) do
      if type(k) ~= 'string' or type(value) ~= 'string' then
        return {'malformed', 'profile of ' .. player .. ' in ' .. KEYS[1] .. ': ' .. record}
      end
      stored[k] = value
    end
    version = tonumber(v)
    if tonumber(d) > deadline then
      deadline = tonumber(d)
    end
  end
end

local n = tonumber(ARGV[5])
if ARGV[6 + n] == 'replace' then
  stored = {}
end
for i = 7 + n, #ARGV, 3 do
  if ARGV[i] == 'del' then
    stored[ARGV[i + 1]] = nil
  else
    stored[ARGV[i + 1]] = ARGV[i + 2]
  end
end
local parts = {}
local listed = {}
for i = 6, 5 + n do
  local name = ARGV[i]
  listed[name] = true
  local value = stored[name]
  if value then
    parts[#parts + 1] = '"' .. esc(name) .. '":"' .. esc(value) .. '"'
  end
end
local json = '{' .. table.concat(parts, ',') .. '}'
if #json > tonumber(ARGV[2]) then
  return {'too_large', string.format('%d', #json)}
end
local others = {}
for name in pairs(stored) do
  if not listed[name] then
    others[#others + 1] = name
  end
end
table.sort(others)
for _, name in ipairs(others) do
  parts[#parts + 1] = '"' .. esc(name) .. '":"' .. esc(stored[name]) .. '"'
end
version = version + 1
redis.call('HSET', KEYS[1], player, string.format('%d|%d|{%s}', deadline, version,
  table.concat(parts, ',')))

-- Bounded pruning (deadlines.lua), on one write in 16.
if pruning then
  prune(1, now)
end
-- Raised a minute past the record's deadline, as record_state.lua raises it, so the
-- writes of the next minute skip the EXPIRE.
if redis.call('TTL', KEYS[1]) < deadline - now then
  redis.call('EXPIRE', KEYS[1], string.format('%d', deadline - now + 60))
end
return {'ok', string.format('%d', version), json}
