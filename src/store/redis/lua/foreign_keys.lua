-- foreign_keys.lua: the check of the scripts that write a bracket's keys with
-- commands of one type.
-- Included by: claim_bracket, finish_bracket (assembled in front of them by
-- src/store/redis/scripts.rs).
--
-- A key of another type than leaguekit writes there (planted by something else) is
-- named, not hit: a command of the wrong type would fail inside the script with a
-- WRONGTYPE error that names no key and stops the caller (a whole rollover), and a
-- SET ... NX on it would do nothing and say nothing.
--
-- foreign({{i, type}, ...}) answers {"wrong_type", key, type found, type expected}
-- for the first KEYS[i] that exists with another type than given, or nil.
local function foreign(expected)
  for _, e in ipairs(expected) do
    local found = redis.call('TYPE', KEYS[e[1]])['ok']
    if found ~= 'none' and found ~= e[2] then
      return {'wrong_type', KEYS[e[1]], found, e[2]}
    end
  end
  return nil
end
