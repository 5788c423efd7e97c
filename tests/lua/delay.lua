-- delay.lua — T2.15 delay(q, id, token, ms, mode), PROTOCOL.md §6.2.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = B.active       KEYS[3] = B.schedule
-- ARGV[1] = id             ARGV[2] = token (decimal)
-- ARGV[3] = 'in' or 'at'   ARGV[4] = ms (a delay, or an absolute run-at)
-- ARGV[5] = optional clock override (decimal Unix ms), used in 'in' mode
--
-- Replies: 1 (ok) · error "EMQKIND job id must be JOB-namespaced" (first) ·
--          error "EMQSTALE job gone" · error "EMQSTALE delay token mismatch".
-- The group and gactive are not consulted (D-10); attempts is untouched.
-- Clock: NOW in 'in' mode only. In 'at' mode the caller's decimal goes to
-- ZADD as given (the server parses it as a double).
local id = ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local att = redis.call('HGET', KEYS[1], 'attempts')
if not att then
  return redis.error_reply('EMQSTALE job gone')
end
if att ~= ARGV[2] then
  return redis.error_reply('EMQSTALE delay token mismatch')
end
redis.call('ZREM', KEYS[2], id)
redis.call('HSET', KEYS[1], 'state', 'scheduled')
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
redis.call('ZADD', KEYS[3], score, id)
return 1
