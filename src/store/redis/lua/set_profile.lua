-- set_profile.lua: merge profile fields, check the merged size and write, in one
-- atomic step, so concurrent edits can never together exceed max_bytes.
--
-- The size is that of the profile as JSON, byte for byte what serde_json writes for
-- a map of strings (src/store/types.rs `profile_json`): fields in the given order,
-- `"` and `\` escaped, \b \f \n \r \t by name, other bytes below 0x20 as \u00xx, and
-- everything else (DEL and UTF-8 included) as it is.
--
-- KEYS[1]  player profile (hash: field -> value; "#v" -> version)
-- ARGV[1]  max_bytes
-- ARGV[2]  seconds the profile lives at least
-- ARGV[3]  n: how many field names follow (the season's fields, sorted)
-- ARGV[4..3+n]  field names
-- ARGV[4+n..]   field, value, field, value, ... to set
--
-- Reply: {"ok", version, json} | {"too_large", bytes}

local names = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}
local function esc(s)
  return (string.gsub(s, '[%z\1-\31"\\]', function(c)
    return names[c] or string.format('\\u%04x', string.byte(c))
  end))
end

local n = tonumber(ARGV[3])
local new = {}
for i = 4 + n, #ARGV, 2 do
  new[ARGV[i]] = ARGV[i + 1]
end
local parts = {}
for i = 4, 3 + n do
  local name = ARGV[i]
  local value = new[name]
  if value == nil then
    value = redis.call('HGET', KEYS[1], name)
  end
  if value then
    parts[#parts + 1] = '"' .. esc(name) .. '":"' .. esc(value) .. '"'
  end
end
local json = '{' .. table.concat(parts, ',') .. '}'
if #json > tonumber(ARGV[1]) then
  return {'too_large', string.format('%d', #json)}
end
for i = 4 + n, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
local version = redis.call('HINCRBY', KEYS[1], '#v', 1)
local ttl = tonumber(ARGV[2])
if redis.call('TTL', KEYS[1]) < ttl then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return {'ok', string.format('%d', version), json}
