-- repeat_cancel.lua — T5.8 cancel(q, name), PROTOCOL.md §6.5.
--
-- KEYS[1] = B.repeat       emq:{q}:repeat
-- KEYS[2] = B.repeat:<name>
-- ARGV[1] = name
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (cancelled: name was in the registry) · 0 (absent). The record
-- is deleted either way.
-- Clock: none.
local r = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return r
