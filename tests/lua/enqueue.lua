-- enqueue.lua — T1.1 enqueue(q, id, payload), PROTOCOL.md §6.1.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = B.pending      emq:{q}:pending
-- ARGV[1] = id             ARGV[2] = payload
-- ARGV[3] = optional clock override (decimal Unix ms); this transition reads
--           no clock, so the value is accepted and ignored.
--
-- Replies: 1 (enqueued) · 0 (duplicate: a row exists, nothing changes)
--          · error "EMQKIND job id must be JOB-namespaced".
-- Clock: none.
local id = ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', KEYS[2], 0, id)
return 1
