-- update_progress.lua — T2.9 update_progress(q, id, progress), PROTOCOL.md
-- §6.2, with its event.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- ARGV[1] = progress       ARGV[2] = id
-- ARGV[3] = B(q)           emq:{q}:   (the channel is B(q) .. 'events')
-- ARGV[4] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (ok) · -1 (gone: no row, nothing published).
-- Effects: field `progress` set; then PUBLISH on emq:{q}:events of the JSON
-- object with string members event = 'progress', job = id, progress =
-- progress, encoded by the server's cjson (JSON-S escaping, which escapes
-- '/' and 0x7F; member order is the encoder's, D-4).
-- Clock: none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
redis.call('HSET', KEYS[1], 'progress', ARGV[1])
local msg = cjson.encode({event = 'progress', job = ARGV[2],
                          progress = ARGV[1]})
redis.call('PUBLISH', ARGV[3] .. 'events', msg)
return 1
