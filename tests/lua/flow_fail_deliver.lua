-- flow_fail_deliver.lua — T4.12 flow_fail_deliver on the parent's queue P,
-- PROTOCOL.md §6.4.
--
-- KEYS[1] = J(p).dependencies      KEYS[2] = J(p).failed
-- KEYS[3] = J(p).unsuccessful      KEYS[4] = J(p)
-- ARGV[1] = child          ARGV[2] = error          ARGV[3] = policy
-- ARGV[4] = B(P)           emq:{P}:   (pending and dead are derived)
-- ARGV[5] = p
-- ARGV[6] = optional clock override (ignored: no clock is read)
--
-- Reply: 1.
--   policy 'fp': only when failed[child] was absent: it is set to error, p's
--     state set to dead, p added to dead and removed from pending.
--   any other policy: only when unsuccessful[child] was absent: it is set
--     to error, dependencies decremented and, at <= 0, p added to pending
--     and its state set to pending.
-- Clock: none.
local child, err, base, p = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
if ARGV[3] == 'fp' then
  if redis.call('HSETNX', KEYS[2], child, err) == 1 then
    redis.call('HSET', KEYS[4], 'state', 'dead')
    redis.call('ZADD', base .. 'dead', 0, p)
    redis.call('ZREM', base .. 'pending', p)
  end
elseif redis.call('HSETNX', KEYS[3], child, err) == 1 then
  local left = redis.call('INCRBY', KEYS[1], -1)
  if left <= 0 then
    redis.call('ZADD', base .. 'pending', 0, p)
    redis.call('HSET', KEYS[4], 'state', 'pending')
  end
end
return 1
