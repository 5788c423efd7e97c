-- reassign.lua — T3.9 reassign(q, id, dst), PROTOCOL.md §6.3.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = lane(dst)      emq:{q}:g:<dst>:pending
-- KEYS[3] = B.ring         KEYS[4] = B.paused
-- KEYS[5] = B.glimit       KEYS[6] = B.gactive
-- KEYS[7] = B.wake
-- ARGV[1] = id             ARGV[2] = dst
-- ARGV[3] = B(q)           emq:{q}:   (lane(src) is derived from it)
-- ARGV[4] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (reassigned) · 0 (noop: src = dst) · -1 (not_found: no row or
--          no group) · -2 (not_pending: not in its lane).
-- Clock: none.
local id, dst, base = ARGV[1], ARGV[2], ARGV[3]
local src = redis.call('HGET', KEYS[1], 'group')
if not src then
  return -1
end
if src == dst then
  return 0
end
local slane = base .. 'g:' .. src .. ':pending'
if redis.call('ZREM', slane, id) == 0 then
  return -2
end
redis.call('ZADD', KEYS[2], 0, id)
redis.call('HSET', KEYS[1], 'group', dst)
if redis.call('SISMEMBER', KEYS[4], dst) == 0 then
  local act = tonumber(redis.call('HGET', KEYS[6], dst) or '0')
  local lim = redis.call('HGET', KEYS[5], dst)
  if (not lim or act < tonumber(lim))
      and not redis.call('LPOS', KEYS[3], dst) then
    redis.call('RPUSH', KEYS[3], dst)
    redis.call('LPUSH', KEYS[7], '1')
    redis.call('LTRIM', KEYS[7], 0, 63)
  end
end
if redis.call('ZCARD', slane) == 0 then
  redis.call('LREM', KEYS[3], 0, src)
end
return 1
