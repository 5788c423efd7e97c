-- flow_deliver.lua — T4.11 flow_deliver on the parent's queue P,
-- PROTOCOL.md §6.4.
--
-- KEYS[1] = J(p).dependencies      emq:{P}:job:<p>:dependencies
-- KEYS[2] = J(p).processed         emq:{P}:job:<p>:processed
-- KEYS[3] = J(p)                   emq:{P}:job:<p>
-- ARGV[1] = child          ARGV[2] = result         ARGV[3] = p
-- ARGV[4] = B(P)           emq:{P}:   (B(P) .. 'pending' is derived)
-- ARGV[5] = optional clock override (ignored: no clock is read)
--
-- Reply: 1. Only when processed[child] was absent: it is set to result,
-- dependencies is decremented and, at <= 0, p is added to pending and its
-- state set to pending. A re-delivery changes nothing.
-- Clock: none.
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  local left = redis.call('INCRBY', KEYS[1], -1)
  if left <= 0 then
    redis.call('ZADD', ARGV[4] .. 'pending', 0, ARGV[3])
    redis.call('HSET', KEYS[3], 'state', 'pending')
  end
end
return 1
