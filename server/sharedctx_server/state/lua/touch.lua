-- Restart the TTL of entries that have one, without rewriting them.
-- KEYS[1..9] = namespace keys (see lib), KEYS[10..] = the entries' hashes
-- ARGV[1] = change-log max length, ARGV[2] = sweep limit, ARGV[3..] = the keys
-- Returns, per key, {version, expiry ms}: version 0 when the key is absent or expired, expiry
-- 0 when the entry never expires.
-- An entry's TTL is its expiry minus its last write (x - u): a put sets both from one clock
-- reading and a touch moves only x, so the TTL the writer gave is known however often the
-- entry was touched since.
local logmax, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
-- Expired entries go first (logged as expiries), so none of them comes back to life.
sweep(now, limit, logmax)
local out = {}
for i = 1, #KEYS - NS_KEYS do
  local key, ekey = ARGV[2 + i], KEYS[NS_KEYS + i]
  local f = redis.call('HMGET', ekey, 'v', 'u', 'x')
  local version, updated, expires = tonumber(f[1] or '0'), tonumber(f[2] or '0'), tonumber(f[3] or '0')
  if version == 0 or (expires > 0 and expires < now) then
    -- Absent, or expired past what the sweep's limit reached this time.
    out[i] = {0, 0}
  elseif expires == 0 then
    out[i] = {version, 0}
  else
    local renewed = now + (expires - updated)
    if renewed > expires then
      redis.call('HSET', ekey, 'x', renewed)
      redis.call('PEXPIREAT', ekey, renewed)
      redis.call('ZADD', KEYS[2], renewed, key)
      -- The record carries the new expiry to every replica's namespace cache.
      log_change(logmax, 'touch', key, version, nil, renewed)
      expires = renewed
    end
    out[i] = {version, expires}
  end
end
return out
