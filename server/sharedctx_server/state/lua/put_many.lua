-- Write N entries of one namespace atomically, within the namespace's quota: all compare-and-set
-- checks pass, expired entries are swept, the quota holds (or the oldest entries are evicted
-- until it does), then all writes.
-- KEYS[1..9] = namespace keys (see lib), KEYS[9+i] = entry hash of item i (i = 1..N),
-- KEYS[9+N+j] = entry hash of eviction candidate j (j = 1..M)
-- ARGV[1] = change-log max length, ARGV[2] = sweep limit, ARGV[3] = N,
-- ARGV[4] = max entries, ARGV[5] = max bytes (0 = unlimited),
-- ARGV[6] = policy when over: 'reject' or 'evict_oldest', ARGV[7] = M
-- then per item, 12 values: key, if_version ('' = unconditional), ttl_ms (0 = never),
--   event_ms ('' = now), meta (msgpack), full, compressed, has_compressed ('1'/'0'),
--   orig_tokens, comp_tokens, content hash of the embedded text, its vector ('' = none given,
--   '?' = none needed: the caller found it stored, and it must still be)
--   (bytes stored = #full + #compressed-if-any)
-- then M candidate keys: the oldest keys of `age` as the caller read them, which are the only
--   entries this call may evict (a script may touch only the keys it is given)
-- Returns {'ok', {version, created, updated, expires, event, write sequence}...}
--      or {'need_vectors'}: a vector the caller counted on ('?') is gone (a delete dropped its
--         last reference since the caller looked); nothing written, send the vectors
--      or {'conflict', item index (1-based), current version}
--      or {'quota', 'max_entries' or 'max_bytes', projected value, limit}: nothing written
--      or {'need_more', age members examined}: eviction needs entries that were not among the
--         candidates; nothing written (but the sweep), call again with more candidates
local logmax, limit, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local max_entries, max_bytes = tonumber(ARGV[4]), tonumber(ARGV[5])
local policy, m = ARGV[6], tonumber(ARGV[7])
local HEAD, W = 7, 12
-- Age members read per ZRANGE while looking for eviction victims.
local PAGE = 64

-- Field f (1..W) of item i.
local function item(i, f)
  return ARGV[HEAD + (i - 1) * W + f]
end

local function item_bytes(i)
  local bytes = #item(i, 6)
  if item(i, 8) == '1' then bytes = bytes + #item(i, 7) end
  return bytes
end

-- The first limit the projected totals break, with the projected value and the limit; nil if none.
local function over_limit(entries, bytes)
  if max_entries > 0 and entries > max_entries then
    return 'max_entries', entries, max_entries
  end
  if max_bytes > 0 and bytes > max_bytes then
    return 'max_bytes', bytes, max_bytes
  end
  return nil
end

-- The oldest entries whose removal brings the projection within the limits, never a key of this
-- batch, walking `age` itself (the candidates the caller read may be stale). Returns the victims
-- as {key, entry hash}, or nil and the reply to give instead.
local function plan_evictions(entries, bytes, batch)
  local allowed = {}
  for j = 1, m do
    allowed[ARGV[HEAD + n * W + j]] = KEYS[NS_KEYS + n + j]
  end
  local victims, walked = {}, 0
  while true do
    local page = redis.call('ZRANGE', KEYS[9], walked, walked + PAGE - 1)
    for _, key in ipairs(page) do
      walked = walked + 1
      if not batch[key] then
        local ekey = allowed[key]
        if not ekey then return nil, {'need_more', walked} end
        local bytes_freed = stored_bytes(key)
        if bytes_freed then
          victims[#victims + 1] = {key, ekey}
          entries, bytes = entries - 1, bytes - bytes_freed
          if not over_limit(entries, bytes) then return victims end
        end
      end
    end
    if #page < PAGE then
      -- Everything but this batch would go and it still does not fit.
      local name, value, cap = over_limit(entries, bytes)
      return nil, {'quota', name, value, cap}
    end
  end
end

-- Phase 0: a vector the caller found stored a moment ago may have gone with the last entry
-- that referenced it; then the entry would be written without one, not Fit-ready.
for i = 1, n do
  if item(i, 12) == '?' and redis.call('HEXISTS', KEYS[8], item(i, 11)) == 0 then
    return {'need_vectors'}
  end
end

-- Phase 1: compare-and-set checks.
for i = 1, n do
  local want = item(i, 2)
  if want ~= '' then
    local cur = tonumber(redis.call('HGET', KEYS[NS_KEYS + i], 'v') or '0')
    if cur ~= tonumber(want) then
      return {'conflict', i, cur}
    end
  end
end

-- Texts the batch relies on ('?') are pinned while it runs: the sweep, evictions and the
-- batch's own overwrites drop references, and the last one going would take the vector an
-- item is about to use.
local pinned = {}
for i = 1, n do
  if item(i, 12) == '?' and not pinned[item(i, 11)] then
    pinned[item(i, 11)] = true
    redis.call('HINCRBY', KEYS[7], item(i, 11), 1)
  end
end
local function unpin()
  for h in pairs(pinned) do
    release_vector(h)
  end
end

local function apply()
  -- Phase 2: expired entries leave first, so they never cost a live one its place.
  local now = now_ms()
  sweep(now, limit, logmax)

  -- Phase 3: the quota, on the totals as they will be after this batch.
  if max_entries > 0 or max_bytes > 0 then
    local entries = tonumber(redis.call('HGET', KEYS[4], 'entries') or '0')
    local bytes = tonumber(redis.call('HGET', KEYS[4], 'bytes') or '0')
    local batch = {}
    for i = 1, n do
      local key = item(i, 1)
      batch[key] = true
      -- An overwrite replaces its entry's bytes and adds no entry.
      local old = stored_bytes(key)
      if old then bytes = bytes - old else entries = entries + 1 end
      bytes = bytes + item_bytes(i)
    end
    local name, value, cap = over_limit(entries, bytes)
    if name then
      if policy ~= 'evict_oldest' then
        return {'quota', name, value, cap}
      end
      local victims, reply = plan_evictions(entries, bytes, batch)
      if not victims then return reply end
      for _, victim in ipairs(victims) do
        evict(logmax, victim[1], victim[2])
      end
    end
  end

  -- Phase 4: the writes.
  local out = {}
  for i = 1, n do
    local key, ttl, event = item(i, 1), tonumber(item(i, 3)), item(i, 4)
    local meta, full, comp, has_comp = item(i, 5), item(i, 6), item(i, 7), item(i, 8)
    local ekey = KEYS[NS_KEYS + i]
    local prev = redis.call('HMGET', ekey, 'v', 'c')
    local version = tonumber(prev[1] or '0') + 1
    local created = tonumber(prev[2] or now)
    if event == '' then event = now else event = tonumber(event) end
    local expires = 0
    if ttl > 0 then expires = now + ttl end

    -- DEL first: drops the old TTL and text fields the new write may not have.
    redis.call('DEL', ekey)
    redis.call('HSET', ekey, 'v', version, 'c', created, 'u', now, 't', event, 'x', expires,
      'm', meta)
    -- Two forms as f and z; one text that is both as o, so that a read of either form is one
    -- HMGET of fields that exist (see keys.py).
    if has_comp == '1' then
      redis.call('HSET', ekey, 'f', full, 'z', comp)
    else
      redis.call('HSET', ekey, 'o', full)
    end
    if expires > 0 then
      redis.call('PEXPIREAT', ekey, expires)
      redis.call('ZADD', KEYS[2], expires, key)
    else
      redis.call('ZREM', KEYS[2], key)
    end
    redis.call('ZADD', KEYS[1], 0, key)
    local seq = log_change(logmax, 'put', key, version)
    local h, vector = item(i, 11), item(i, 12)
    put_sizes(key, tonumber(item(i, 9)), tonumber(item(i, 10)), item_bytes(i), h, seq, version)
    if vector ~= '' and vector ~= '?' then
      redis.call('HSET', KEYS[8], h, vector)
    end
    redis.call('HSET', ekey, 'q', seq)
    out[i] = {version, created, now, expires, event, seq}
  end
  return {'ok', out}
end

local reply = apply()
unpin()
return reply
