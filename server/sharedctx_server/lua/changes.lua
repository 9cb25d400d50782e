-- The change-log records after a position, with the server's clock, in one round trip.
-- KEYS[1] = log; ARGV[1] = last stream id seen ('0' for all), ARGV[2] = most records to return
-- Returns {now_ms, {id, {field, value, ...}}...}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local records = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', tonumber(ARGV[2]))
return {now, records}
