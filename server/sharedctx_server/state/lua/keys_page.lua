-- One page of live keys in byte order.
-- KEYS[1] = idx, KEYS[2] = exp
-- ARGV[1] = lex start ('[prefix' or '(last key'), ARGV[2] = lex end, ARGV[3] = page size,
-- ARGV[4] = max scan rounds (bounds the work when many members have expired)
-- Returns {keys..., cursor}: cursor is the last key examined when more may follow, else ''.
local start, stop, size, rounds = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out, last = {}, nil
for _ = 1, rounds do
  local batch = redis.call('ZRANGEBYLEX', KEYS[1], start, stop, 'LIMIT', 0, size + 1)
  for _, key in ipairs(batch) do
    local exp = redis.call('ZSCORE', KEYS[2], key)
    -- Redis treats a key as expired once its expiry time is in the past.
    if not exp or tonumber(exp) >= now then
      if #out == size then
        out[#out + 1] = last
        return out
      end
      out[#out + 1] = key
    end
    last = key
  end
  if #batch < size + 1 then
    out[#out + 1] = ''
    return out
  end
  start = '(' .. last
end
out[#out + 1] = last
return out
