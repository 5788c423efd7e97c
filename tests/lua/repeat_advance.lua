-- repeat_advance.lua — T5.8 advance(q, name, every_ms), PROTOCOL.md §6.5.
--
-- KEYS[1] = B.repeat       emq:{q}:repeat
-- KEYS[2] = B.repeat:<name>
-- ARGV[1] = name
-- ARGV[2] = next_at = HOST-NOW + every_ms (decimal Unix ms, computed by the
--           caller, D-11)
-- ARGV[3] = optional clock override (ignored: no server clock is read)
--
-- Replies: 1 (advanced: name scored at next_at) · 0 (absent: no record; name
--          is removed from the registry).
-- Clock: none inside (the caller's HOST-NOW is in next_at).
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
