-- lane_enqueue.lua — T3.1 lane enqueue(q, g, id, payload), PROTOCOL.md §6.3.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = lane(g)        emq:{q}:g:<g>:pending
-- KEYS[3] = B.ring         KEYS[4] = B.paused
-- KEYS[5] = B.glimit       KEYS[6] = B.gactive
-- KEYS[7] = B.wake
-- ARGV[1] = id             ARGV[2] = payload        ARGV[3] = g
-- ARGV[4] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (enqueued) · 0 (duplicate: any row exists) · error "EMQKIND job
--          id must be JOB-namespaced".
-- Effects: the row with group = g, the lane entry at 0, and, unless g is
-- paused, OFFER(g, GACT(g)) (ring push-right + WAKE when below the limit and
-- not already on the ring).
-- Clock: none.
local id, g = ARGV[1], ARGV[3]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0',
           'payload', ARGV[2], 'group', g)
redis.call('ZADD', KEYS[2], 0, id)
if redis.call('SISMEMBER', KEYS[4], g) == 0 then
  local act = tonumber(redis.call('HGET', KEYS[6], g) or '0')
  local lim = redis.call('HGET', KEYS[5], g)
  if (not lim or act < tonumber(lim))
      and not redis.call('LPOS', KEYS[3], g) then
    redis.call('RPUSH', KEYS[3], g)
    redis.call('LPUSH', KEYS[7], '1')
    redis.call('LTRIM', KEYS[7], 0, 63)
  end
end
return 1
