-- freeze.lua: close a bracket to updates and read its final board in the same
-- atomic step, so the board read is exactly the board that is kept.
--
-- KEYS[1]  bracket board (zset: player -> minus the packed score)
-- KEYS[2]  bracket meta (hash: "closed")
--
-- Reply: {player1, score1, player2, score2, ...} (ZRANGE WITHSCORES)

redis.call('HSET', KEYS[2], 'closed', '1')
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
