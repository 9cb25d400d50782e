-- Drop up to ARGV[2] expired index members of a namespace (see lib's sweep).
-- KEYS[1..9] = namespace keys, ARGV[1] = change-log max length, ARGV[2] = limit
-- Returns {how many were dropped, the earliest expiry time still pending ('' when none)}.
local dropped = sweep(now_ms(), tonumber(ARGV[2]), tonumber(ARGV[1]))
local next = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return {dropped, next[2] or ''}
