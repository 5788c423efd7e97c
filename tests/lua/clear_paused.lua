-- clear_paused.lua — T2.1 resume(q): clear the queue-wide pause flag,
-- PROTOCOL.md §6.2.
--
-- KEYS[1] = B.meta         emq:{q}:meta
-- ARGV[1] = optional clock override (ignored: no clock is read)
--
-- Reply: 1, whether or not the field was there. Deletes field `paused`
-- (the hash ceases to exist when it was its last field).
redis.call('HDEL', KEYS[1], 'paused')
return 1
