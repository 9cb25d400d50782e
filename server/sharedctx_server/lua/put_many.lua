-- Write N entries of one namespace atomically: all compare-and-set checks pass, then all writes.
-- KEYS[1..8] = namespace keys (see lib), KEYS[8+i] = entry hash of item i
-- ARGV[1] = change-log max length, ARGV[2] = sweep limit, ARGV[3] = N
-- then per item, 12 values: key, if_version ('' = unconditional), ttl_ms (0 = never),
--   event_ms ('' = now), meta (msgpack), full, compressed, has_compressed ('1'/'0'),
--   orig_tokens, comp_tokens, content hash of the embedded text, its vector ('' = none given)
--   (bytes stored = #full + #compressed-if-any)
-- Returns {'ok', {version, created, updated, expires, event, write sequence}...}
--      or {'conflict', item index (1-based), current version}
local logmax, limit, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local W = 12

for i = 1, n do
  local want = ARGV[3 + (i - 1) * W + 2]
  if want ~= '' then
    local cur = tonumber(redis.call('HGET', KEYS[NS_KEYS + i], 'v') or '0')
    if cur ~= tonumber(want) then
      return {'conflict', i, cur}
    end
  end
end

local now = now_ms()
sweep(now, limit, logmax)

local out = {}
for i = 1, n do
  local base = 3 + (i - 1) * W
  local key, ttl, event = ARGV[base + 1], tonumber(ARGV[base + 3]), ARGV[base + 4]
  local meta, full, comp, has_comp = ARGV[base + 5], ARGV[base + 6], ARGV[base + 7], ARGV[base + 8]
  local ekey = KEYS[NS_KEYS + i]
  local prev = redis.call('HMGET', ekey, 'v', 'c')
  local version = tonumber(prev[1] or '0') + 1
  local created = tonumber(prev[2] or now)
  if event == '' then event = now else event = tonumber(event) end
  local expires = 0
  if ttl > 0 then expires = now + ttl end

  -- DEL first: drops the old TTL and a compressed field the new write may not have.
  redis.call('DEL', ekey)
  redis.call('HSET', ekey, 'v', version, 'c', created, 'u', now, 't', event, 'x', expires,
    'm', meta, 'f', full)
  local bytes = #full
  if has_comp == '1' then
    redis.call('HSET', ekey, 'z', comp)
    bytes = bytes + #comp
  end
  if expires > 0 then
    redis.call('PEXPIREAT', ekey, expires)
    redis.call('ZADD', KEYS[2], expires, key)
  else
    redis.call('ZREM', KEYS[2], key)
  end
  redis.call('ZADD', KEYS[1], 0, key)
  drop_sizes(key)
  local h, vector = ARGV[base + 11], ARGV[base + 12]
  add_sizes(key, tonumber(ARGV[base + 9]), tonumber(ARGV[base + 10]), bytes, h)
  if vector ~= '' then
    redis.call('HSET', KEYS[8], h, vector)
  end
  local seq = log_change(logmax, 'put', key, version)
  redis.call('HSET', ekey, 'q', seq)
  out[i] = {version, created, now, expires, event, seq}
end
return {'ok', out}
