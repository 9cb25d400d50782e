-- Claim namespaces whose next expiry is due, so that one replica reaps each.
-- KEYS[1] = expiries (zset namespace -> when its next entry expires, ms)
-- ARGV[1] = now (ms), ARGV[2] = lease end (ms), ARGV[3] = most namespaces to claim
-- Returns the claimed namespaces. Each is pushed back to the lease's end: the claimer sets its
-- true next time when done, and a claimer that dies lets the lease lapse for another.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, namespace in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], namespace)
end
return due
