-- limit.lua — T3.8 limit(q, g, n), PROTOCOL.md §6.3.
--
-- KEYS[1] = B.glimit       KEYS[2] = B.gactive
-- KEYS[3] = B.ring         KEYS[4] = B.paused
-- KEYS[5] = B.wake
-- ARGV[1] = B(q)           emq:{q}:   (lane(g) is derived from it)
-- ARGV[2] = g              ARGV[3] = n (decimal, > 0; the host gate)
-- ARGV[4] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. Sets glimit[g] = n; at or above the limit g leaves the ring;
-- below it, an unpaused g with a non-empty lane that is not on the ring is
-- pushed onto it with a WAKE.
-- Clock: none.
local g, n = ARGV[2], tonumber(ARGV[3])
redis.call('HSET', KEYS[1], g, ARGV[3])
local act = tonumber(redis.call('HGET', KEYS[2], g) or '0')
if act >= n then
  redis.call('LREM', KEYS[3], 0, g)
elseif redis.call('SISMEMBER', KEYS[4], g) == 0
    and redis.call('ZCARD', ARGV[1] .. 'g:' .. g .. ':pending') > 0
    and not redis.call('LPOS', KEYS[3], g) then
  redis.call('RPUSH', KEYS[3], g)
  redis.call('LPUSH', KEYS[5], '1')
  redis.call('LTRIM', KEYS[5], 0, 63)
end
return 1
