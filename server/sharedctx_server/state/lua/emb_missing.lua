-- Which content hashes have no embedding of the current model yet.
-- KEYS[1] = emb (hash h -> vector); ARGV[i] = content hash i
-- Returns one 0/1 per hash: 1 when the vector is missing.
local out = {}
for i, h in ipairs(ARGV) do
  out[i] = 1 - redis.call('HEXISTS', KEYS[1], h)
end
return out
