-- schedule.lua — T1.3 enqueue_at(q, id, payload, run_at_ms) and
-- enqueue_in(q, id, payload, delay_ms), PROTOCOL.md §6.1.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = B.schedule     emq:{q}:schedule
-- ARGV[1] = id             ARGV[2] = payload
-- ARGV[3] = 'at' or 'in'   ARGV[4] = run_at_ms (at) or delay_ms (in), decimal
-- ARGV[5] = optional clock override (decimal Unix ms), used in 'in' mode
--
-- Replies: 1 (scheduled) · 0 (duplicate) · error "EMQKIND job id must be
--          JOB-namespaced".
-- Clock: NOW in 'in' mode only (TIME, or ARGV[5]). In 'at' mode the caller's
-- decimal run-at goes to ZADD as given, so the server parses it as a double
-- exactly as for any other ZADD score.
local id = ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local score
if ARGV[3] == 'in' then
  local now
  if #ARGV >= 5 then
    now = tonumber(ARGV[5])
  else
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  score = now + tonumber(ARGV[4])
else
  score = ARGV[4]
end
redis.call('HSET', KEYS[1], 'state', 'scheduled', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', KEYS[2], score, id)
return 1
