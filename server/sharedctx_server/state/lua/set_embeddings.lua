-- Store embeddings computed after the entry was written (EMBED_ASYNC puts, re-embedding).
-- KEYS[1..9] = namespace keys (see lib)
-- ARGV[1] = change-log max length, then triples: content hash, vector, key (for the log)
-- A vector whose text no live entry embeds any more is dropped, not stored.
-- Returns how many vectors were stored.
local logmax, stored = tonumber(ARGV[1]), 0
for i = 2, #ARGV, 3 do
  local h, vector, key = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HEXISTS', KEYS[7], h) == 1 then
    redis.call('HSET', KEYS[8], h, vector)
    log_change(logmax, 'embed', key, 0)
    stored = stored + 1
  end
end
return stored
