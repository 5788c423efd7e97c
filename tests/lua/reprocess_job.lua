-- reprocess_job.lua — T2.13 reprocess_job(q, id), PROTOCOL.md §6.2.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = B.dead         KEYS[3] = B.pending
-- ARGV[1] = id
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (ok) · -1 (gone: no row) · error "EMQSTATE not dead".
-- attempts is kept; a grouped job re-enters the flat pending; the queue-wide
-- pause is not consulted.
-- Clock: none.
local id = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('ZREM', KEYS[2], id) == 0 then
  return redis.error_reply('EMQSTATE not dead')
end
redis.call('HDEL', KEYS[1], 'last_error')
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('ZADD', KEYS[3], 0, id)
return 1
