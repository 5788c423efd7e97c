-- enqueue_flow.lua — T4.1 flow add, all children in the parent's queue,
-- none nested (steps 1-5), PROTOCOL.md §6.4.
--
-- KEYS[1] = J(p)           emq:{q}:job:<p>
-- KEYS[2] = J(p).dependencies
-- KEYS[3] = B.pending      emq:{q}:pending
-- KEYS[3 + i] = J(c_i)     for each child i = 1..N, in spec order
-- ARGV[1] = p              ARGV[2] = the parent's payload
-- ARGV[3] = N (decimal)
-- ARGV[2 + 2i], ARGV[3 + 2i] = c_i, payload_i
-- ARGV[4 + 2N] = optional clock override (ignored: no clock is read)
--
-- Replies: N · error "EMQKIND job id must be JOB-namespaced" (the parent
--          first, then every child in order, all before any write).
-- Effects: each child row set state pending, attempts 0, payload, parent
-- (field-wise: an existing row is overwritten, D-14) and added to pending;
-- the parent row set awaiting_children, attempts 0, payload; its
-- dependencies = N. The children's parent_policy is written by the caller
-- afterwards (step 6).
-- Clock: none.
local p, n = ARGV[1], tonumber(ARGV[3])
local function kind(id)
  return string.sub(id, 1, 3) == 'JOB'
end
if not kind(p) then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
for i = 1, n do
  if not kind(ARGV[2 + 2 * i]) then
    return redis.error_reply('EMQKIND job id must be JOB-namespaced')
  end
end
for i = 1, n do
  local c = ARGV[2 + 2 * i]
  redis.call('HSET', KEYS[3 + i], 'state', 'pending', 'attempts', '0',
             'payload', ARGV[3 + 2 * i], 'parent', p)
  redis.call('ZADD', KEYS[3], 0, c)
end
redis.call('HSET', KEYS[1], 'state', 'awaiting_children', 'attempts', '0',
           'payload', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return n
