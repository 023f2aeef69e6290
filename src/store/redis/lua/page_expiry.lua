-- page_expiry.lua: the page cache's expiry rule, for the page cache and the profiles'
-- string (see open_page.lua) and the bracket meta that says they may exist.
-- Included by: standings, open_page, keep_page, finish_bracket, adjust (assembled in
-- front of them by src/store/redis/scripts.rs).
--
-- Kept pages and the profiles' string are read with a plain HGET or GET, which
-- cannot compare them with the board, so they never outlive the board: each expires
-- after its keep time or with the board, whichever comes first; and finish_bracket.lua,
-- which sets the board's retention, shortens them again if need be. A bracket meta
-- created by a cache write takes the board's expiry (the rollover later sets both).
-- Expiries follow the board's by its absolute time (PEXPIRETIME), never by its TTL
-- given again: the clock runs on within a script (Redis 7.0), so a TTL read and
-- given a few commands later lands that many milliseconds later.

-- kept_for(cap, left, keep): the expiry of something kept at most `keep` ms (an
-- argument) that must not outlive KEYS[cap], whose PTTL the caller read as `left`:
-- 'PXAT' and KEYS[cap]'s expiry time when that comes first, else 'PX' and `keep`
-- (as SET takes them).
local function kept_for(cap, left, keep)
  if left > 0 and left < tonumber(keep) then
    return 'PXAT', redis.call('PEXPIRETIME', KEYS[cap])
  end
  return 'PX', keep
end

-- keep_new(i, cap, left, keep): KEYS[i], a hash just written, takes that expiry
-- (kept_for) if it has none yet.
local function keep_new(i, cap, left, keep)
  if redis.call('PTTL', KEYS[i]) < 0 then
    local how, at = kept_for(cap, left, keep)
    if how == 'PXAT' then
      redis.call('PEXPIREAT', KEYS[i], at)
    else
      redis.call('PEXPIRE', KEYS[i], at)
    end
  end
end

-- mark_paged(meta, board, left): the meta flag "paged" in KEYS[meta], saying the page
-- cache may hold pages; a meta hash created here takes the expiry time of the board
-- KEYS[board], whose PTTL the caller read as `left`.
local function mark_paged(meta, board, left)
  if redis.call('HSETNX', KEYS[meta], 'paged', '1') == 1
      and left > 0 and redis.call('PTTL', KEYS[meta]) == -1 then
    redis.call('PEXPIREAT', KEYS[meta], redis.call('PEXPIRETIME', KEYS[board]))
  end
end

-- not_past(board, first, last): KEYS[first..last], kept of the board KEYS[board],
-- expire no later than the board, whose expiry was just set; they are deleted when
-- there is no board (nothing to show, nothing kept of it either).
local function not_past(board, first, last)
  local board_at = redis.call('PEXPIRETIME', KEYS[board])
  for i = first, last do
    if board_at < 0 then
      redis.call('DEL', KEYS[i])
    else
      local at = redis.call('PEXPIRETIME', KEYS[i])
      if at == -1 or at > board_at then
        redis.call('PEXPIREAT', KEYS[i], board_at)
      end
    end
  end
end
