-- hold_parent.lua — T4.2 hold_parent(q, parent, payload, N), PROTOCOL.md
-- §6.4.
--
-- KEYS[1] = J(p)           emq:{q}:job:<p>
-- KEYS[2] = J(p).dependencies
-- ARGV[1] = p              ARGV[2] = payload        ARGV[3] = N (decimal)
-- ARGV[4] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 · error "EMQKIND job id must be JOB-namespaced".
-- Effects: the row set awaiting_children, attempts 0, payload (no existence
-- check); dependencies = N.
-- Clock: none.
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
redis.call('HSET', KEYS[1], 'state', 'awaiting_children', 'attempts', '0',
           'payload', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return 1
