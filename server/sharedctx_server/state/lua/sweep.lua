-- Drop up to ARGV[2] expired index members of a namespace (see lib's sweep).
-- KEYS[1..9] = namespace keys, ARGV[1] = change-log max length, ARGV[2] = limit
-- Returns how many were dropped.
return sweep(now_ms(), tonumber(ARGV[2]), tonumber(ARGV[1]))
