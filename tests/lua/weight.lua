-- weight.lua — T3.5 weight(q, g, w), PROTOCOL.md §6.3.
--
-- KEYS[1] = B.gweight      emq:{q}:gweight
-- ARGV[1] = g              ARGV[2] = w (decimal, >= 1; the host gate)
-- ARGV[3] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. No ring change.
-- Clock: none.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
