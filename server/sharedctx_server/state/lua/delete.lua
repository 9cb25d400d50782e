-- Delete one entry, optionally only at an expected version.
-- KEYS[1..9] = namespace keys (see lib), KEYS[10] = entry hash
-- ARGV[1] = change-log max length, ARGV[2] = sweep limit, ARGV[3] = key,
-- ARGV[4] = if_version ('' = unconditional)
-- Returns {'ok', deleted (0/1), version it had} or {'conflict', 1, current version}
local logmax, limit, key, want = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local cur = tonumber(redis.call('HGET', KEYS[NS_KEYS + 1], 'v') or '0')
if want ~= '' and cur ~= tonumber(want) then
  return {'conflict', 1, cur}
end
sweep(now_ms(), limit, logmax)
if cur == 0 then
  return {'ok', 0, 0}
end
redis.call('DEL', KEYS[NS_KEYS + 1])
redis.call('ZREM', KEYS[1], key)
redis.call('ZREM', KEYS[2], key)
drop_sizes(key)
log_change(logmax, 'delete', key, cur)
return {'ok', 1, cur}
