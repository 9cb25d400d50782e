-- Read entries' metadata and the text of the requested form in one round trip.
-- KEYS[i] = entry hash i (all of one namespace, so one slot)
-- ARGV[i] = '1' for entry i's full form, '0' for its compressed one.
-- Returns one item per key: false when absent/expired,
-- else {v, c, u, t, x, m, text, is_full, q (write sequence)}
local out = {}
for i, ekey in ipairs(KEYS) do
  local f = redis.call('HMGET', ekey, 'v', 'c', 'u', 't', 'x', 'm', 'q')
  if not f[1] then
    out[i] = false
  else
    local text, is_full = nil, '1'
    if ARGV[i] ~= '1' then
      text = redis.call('HGET', ekey, 'z')
      if text then is_full = '0' end
    end
    -- The one text of both forms (o), else the full form (f, which also holds the one text of
    -- entries written before o existed).
    if not text then text = redis.call('HGET', ekey, 'o') or redis.call('HGET', ekey, 'f') end
    out[i] = {f[1], f[2], f[3], f[4], f[5], f[6], text, is_full, f[7]}
  end
end
return out
