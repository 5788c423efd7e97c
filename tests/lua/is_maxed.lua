-- is_maxed.lua — T2.16 is_maxed(q), PROTOCOL.md §6.2.
--
-- KEYS[1] = B.meta         emq:{q}:meta
-- KEYS[2] = B.active       emq:{q}:active
-- ARGV[1] = optional clock override (ignored: no clock is read)
--
-- Replies: 0 (ok) · error "EMQRATE at concurrency ceiling" when the integer
-- field `concurrency` of meta (0 when absent) is > 0 and active holds at
-- least that many members. Advisory: no claim enforces it; the queue-wide
-- pause is not consulted.
-- Clock: none. Pure read.
local cap = tonumber(redis.call('HGET', KEYS[1], 'concurrency') or '0') or 0
if cap > 0 and redis.call('ZCARD', KEYS[2]) >= cap then
  return redis.error_reply('EMQRATE at concurrency ceiling')
end
return 0
