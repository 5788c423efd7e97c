-- repeat_register.lua — T5.8 register(q, name, every_ms, template,
-- first_in_ms), PROTOCOL.md §6.5.
--
-- KEYS[1] = B.repeat       emq:{q}:repeat
-- KEYS[2] = B.repeat:<name>
-- ARGV[1] = name           ARGV[2] = every_ms (decimal, > 0)
-- ARGV[3] = template
-- ARGV[4] = first_at = HOST-NOW + first_in_ms (decimal Unix ms, computed
--           by the caller: repeat scores use the caller's clock, D-11)
-- ARGV[5] = optional clock override (ignored: no server clock is read)
--
-- Replies: 1 (registered) · 0 (exists: the record is there, nothing changes).
-- Clock: none inside (the caller's HOST-NOW is in first_at).
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[2], 'every_ms', ARGV[2], 'template', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
