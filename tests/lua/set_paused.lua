-- set_paused.lua — T2.1 pause(q): the queue-wide pause flag, PROTOCOL.md §6.2.
--
-- KEYS[1] = B.meta         emq:{q}:meta
-- ARGV[1] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. Sets field `paused` to "1" (idempotent).
redis.call('HSET', KEYS[1], 'paused', '1')
return 1
