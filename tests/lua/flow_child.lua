-- flow_child.lua — T4.3 flow_child(cq, child, payload, parent, pq),
-- PROTOCOL.md §6.4; runs on the child's queue cq.
--
-- KEYS[1] = J_cq(c)        emq:{cq}:job:<c>
-- KEYS[2] = emq:{cq}:pending
-- ARGV[1] = c              ARGV[2] = payload        ARGV[3] = p
-- ARGV[4] = pq, the parent's queue, or '' for a child in the parent's queue
-- ARGV[5] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 · error "EMQKIND job id must be JOB-namespaced".
-- Effects: the row set pending, attempts 0, payload, parent, and
-- parent_queue only when pq is not empty; c added to pending. The caller
-- writes parent_policy afterwards.
-- Clock: none.
local c = ARGV[1]
if string.sub(c, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0',
           'payload', ARGV[2], 'parent', ARGV[3])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'parent_queue', ARGV[4])
end
redis.call('ZADD', KEYS[2], 0, c)
return 1
