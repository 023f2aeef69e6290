-- numbers.lua: how a script prints a number it sends to Redis or answers.
-- Included by: adjust, around, join, update (assembled in front of them by
-- src/store/redis/scripts.rs).
--
-- Lua 5.1 numbers are doubles; tostring() and implicit number-to-string conversion
-- use "%.14g", which loses digits above 1e14. fmt(x) prints an integer with "%d",
-- which Redis's Lua 5.1 prints from a C long (64 bits): exact for every integer up to
-- 2^63, and it never goes through the printing of doubles ("%.0f" is exact too, but
-- its bignum arithmetic was 4% of an update's instructions under callgrind). Only
-- integers are ever given to it.
local function fmt(x)
  return string.format('%d', x)
end
