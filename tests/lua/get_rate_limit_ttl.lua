-- get_rate_limit_ttl.lua — T2.16 get_rate_limit_ttl(q, max_jobs),
-- PROTOCOL.md §6.2.
--
-- KEYS[1] = B.limiter      emq:{q}:limiter
-- KEYS[2] = B.meta         emq:{q}:meta
-- ARGV[1] = max_jobs (decimal, >= 0; 0 = use the integer field `max` of
--           meta, 0 when absent)
-- ARGV[2] = optional clock override (ignored, see below)
--
-- Reply: the limiter's remaining TTL in ms when the limit m is > 0, the
-- integer value of the limiter (0 when absent) is >= m, and the key has a
-- positive TTL; otherwise 0.
-- Clock: the server's own key expiry (PTTL). The override cannot move it:
-- a replayer working in a virtual clock translates the reply (see
-- tests/golden_redis.c, "Time").
local m = tonumber(ARGV[1])
if m == 0 then
  m = tonumber(redis.call('HGET', KEYS[2], 'max') or '0') or 0
end
if m > 0 and m <= (tonumber(redis.call('GET', KEYS[1]) or '0') or 0) then
  local p = redis.call('PTTL', KEYS[1])
  if p > 0 then
    return p
  end
end
return 0
