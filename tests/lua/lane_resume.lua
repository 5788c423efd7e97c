-- lane_resume.lua — T3.7 lane resume(q, g), PROTOCOL.md §6.3.
--
-- KEYS[1] = B.paused       KEYS[2] = B.ring
-- KEYS[3] = B.glimit       KEYS[4] = B.gactive
-- KEYS[5] = B.wake
-- ARGV[1] = B(q)           emq:{q}:   (lane(g) is derived from it)
-- ARGV[2] = g
-- ARGV[3] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. g leaves the paused set; when its lane is not empty,
-- OFFER(g, GACT(g)).
-- Clock: none.
local g = ARGV[2]
redis.call('SREM', KEYS[1], g)
if redis.call('ZCARD', ARGV[1] .. 'g:' .. g .. ':pending') > 0 then
  local act = tonumber(redis.call('HGET', KEYS[4], g) or '0')
  local lim = redis.call('HGET', KEYS[3], g)
  if (not lim or act < tonumber(lim))
      and not redis.call('LPOS', KEYS[2], g) then
    redis.call('RPUSH', KEYS[2], g)
    redis.call('LPUSH', KEYS[5], '1')
    redis.call('LTRIM', KEYS[5], 0, 63)
  end
end
return 1
