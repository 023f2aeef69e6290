-- cache_writes.lua: the check of the scripts that read a board and keep what they
-- built. Their cache writes go through redis.pcall and this check, so reads keep
-- working while Redis refuses writes.
-- Included by: standings, open_page, keep_page (assembled in front of them by
-- src/store/redis/scripts.rs).
--
-- Whether a cache write's answer (from redis.pcall) is Redis refusing it for memory:
-- maxmemory reached under noeviction. Redis refuses only a script's first write that
-- way (a script that has written may go on), so nothing was written then, and the
-- read is answered without the cache. Any other error is raised, as redis.call would.
local function refused(answer)
  if type(answer) == 'table' and answer.err then
    if string.sub(answer.err, 1, 4) == 'OOM ' then
      return true
    end
    error(answer)
  end
  return false
end
