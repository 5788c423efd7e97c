-- lane_pause.lua — T3.6 lane pause(q, g), PROTOCOL.md §6.3.
--
-- KEYS[1] = B.paused       emq:{q}:paused
-- KEYS[2] = B.ring         emq:{q}:ring
-- ARGV[1] = g
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. g joins the paused set and leaves the ring; its backlog and its
-- in-flight work are untouched.
-- Clock: none.
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 0, ARGV[1])
return 1
