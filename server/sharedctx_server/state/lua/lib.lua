-- Shared helpers, prepended to every write script (Redis scripts cannot include files).
-- Every write script takes the namespace's fixed keys first:
-- KEYS[1] = idx (zset of live keys)        KEYS[2] = exp (zset key -> expiry ms)
-- KEYS[3] = sizes (hash key -> "o c b h v": tokens, bytes, content hash, entry version)
-- KEYS[4] = stats (hash of namespace totals)
-- KEYS[5] = meta (hash: version)           KEYS[6] = log (change-log stream)
-- KEYS[7] = embref (hash h -> refcount)    KEYS[8] = emb (hash h -> vector, current model)
-- KEYS[9] = age (zset key -> write sequence of its last put; the same keys as sizes)
local NS_KEYS = 9

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Let go of one reference to text h's vector; the last one going takes the vector along.
local function release_vector(h)
  if redis.call('HINCRBY', KEYS[7], h, -1) <= 0 then
    -- No live entry embeds this text any more: its vector goes too.
    redis.call('HDEL', KEYS[7], h)
    redis.call('HDEL', KEYS[8], h)
  end
end

-- Remove one key's contribution to the namespace totals and its embedding reference.
local function drop_sizes(key)
  -- age and sizes change together, so whatever removes an entry keeps `age` exact.
  redis.call('ZREM', KEYS[9], key)
  local old = redis.call('HGET', KEYS[3], key)
  if not old then return false end
  local o, c, b, h = string.match(old, '(%d+) (%d+) (%d+) (%S+)')
  redis.call('HINCRBY', KEYS[4], 'entries', -1)
  -- `0 - n`, not `-n`: Lua's -0 reaches Redis 7.0 as "-0", which HINCRBY refuses.
  redis.call('HINCRBY', KEYS[4], 'orig_tokens', 0 - tonumber(o))
  redis.call('HINCRBY', KEYS[4], 'comp_tokens', 0 - tonumber(c))
  redis.call('HINCRBY', KEYS[4], 'bytes', 0 - tonumber(b))
  redis.call('HDEL', KEYS[3], key)
  release_vector(h)
  return true
end

-- `seq` is the write's namespace version: scoring `age` by it rather than by time gives a strict
-- oldest-first order, even among a batch's items or puts within one millisecond.
-- Replaces whatever the key counted for before. The new embedding reference is taken before
-- the old one is let go: rewriting the only entry of a text with the same text must not let
-- its count touch 0, which would delete the very vector the entry keeps using.
local function put_sizes(key, o, c, b, h, seq, version)
  redis.call('HINCRBY', KEYS[7], h, 1)
  drop_sizes(key)
  redis.call('ZADD', KEYS[9], seq, key)
  redis.call('HSET', KEYS[3], key, o .. ' ' .. c .. ' ' .. b .. ' ' .. h .. ' ' .. version)
  redis.call('HINCRBY', KEYS[4], 'entries', 1)
  redis.call('HINCRBY', KEYS[4], 'orig_tokens', o)
  redis.call('HINCRBY', KEYS[4], 'comp_tokens', c)
  redis.call('HINCRBY', KEYS[4], 'bytes', b)
end

-- Append a change-log record and bump the namespace version; returns the new version,
-- which also orders writes (every replica breaks time ties by it alike). `at`, when given, is
-- when the change happened if not now (an expiry: its expiry time); `expires`, when given, the
-- entry's new expiry (a touch: replicas' caches take it from the record without a read).
local function log_change(logmax, op, key, version, at, expires)
  local nsver = redis.call('HINCRBY', KEYS[5], 'version', 1)
  local fields = {'op', op, 'key', key, 'v', version, 'ns', nsver}
  if at then
    table.insert(fields, 't')
    table.insert(fields, at)
  end
  if expires then
    table.insert(fields, 'x')
    table.insert(fields, expires)
  end
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', logmax, '*', unpack(fields))
  return nsver
end

-- The version of a key's last write, from its sizes record (0 when unknown: written before
-- sizes kept versions). The entry's own hash may already be gone: Redis expires it.
local function last_version(key)
  local rec = redis.call('HGET', KEYS[3], key)
  if not rec then return 0 end
  return tonumber(string.match(rec, '^%d+ %d+ %d+ %S+ (%d+)$') or '0')
end

-- Remove one expired key, logging an 'expire' record stamped with its expiry time and last
-- version.
local function expire(logmax, key, expires)
  local version = last_version(key)
  redis.call('ZREM', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  drop_sizes(key)
  log_change(logmax, 'expire', key, version, expires)
end

-- Drop index members whose entry Redis has already expired (expiry < now, as Redis decides),
-- at most `limit` of them. Returns how many went.
local function sweep(now, limit, logmax)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now,
    'WITHSCORES', 'LIMIT', 0, limit)
  for i = 1, #gone, 2 do
    expire(logmax, gone[i], gone[i + 1])
  end
  return #gone / 2
end

-- Bytes the key's live entry counts for in the totals (its sizes record), nil when it has none.
local function stored_bytes(key)
  local rec = redis.call('HGET', KEYS[3], key)
  if not rec then return nil end
  return tonumber(string.match(rec, '^%d+ %d+ (%d+)'))
end

-- Remove one entry to make room under an evict_oldest quota, exactly as a delete does, and log
-- it as 'evict' (as 'expire' when Redis had already expired its hash before a sweep got to it).
local function evict(logmax, key, ekey)
  local version = redis.call('HGET', ekey, 'v')
  if not version then
    expire(logmax, key, redis.call('ZSCORE', KEYS[2], key) or now_ms())
    return
  end
  redis.call('DEL', ekey)
  redis.call('ZREM', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  drop_sizes(key)
  log_change(logmax, 'evict', key, tonumber(version))
end
