-- update_data.lua — T2.8 update_data(q, id, payload), PROTOCOL.md §6.2.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- ARGV[1] = payload
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (ok) · -1 (gone: no row). Any state; the payload only.
-- Clock: none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
redis.call('HSET', KEYS[1], 'payload', ARGV[1])
return 1
