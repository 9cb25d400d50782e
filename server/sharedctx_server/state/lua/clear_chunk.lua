-- Remove a chunk of a namespace's entries (Clear walks the namespace chunk by chunk).
-- KEYS[1..9] = namespace keys (see lib), KEYS[9+i] = entry hash of ARGV[2+i]
-- ARGV[1] = change-log max length, ARGV[2] = N, ARGV[2+i] = key i
-- Returns how many live entries were removed. Logs one 'clear' record per chunk.
local logmax, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local removed = 0
for i = 1, n do
  local key = ARGV[2 + i]
  removed = removed + redis.call('DEL', KEYS[NS_KEYS + i])
  redis.call('ZREM', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  drop_sizes(key)
end
log_change(logmax, 'clear', '', removed)
return removed
