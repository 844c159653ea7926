-- GET /api/v1/payment-intents/{id} round-robin over intents just created, each with its
-- merchant's key. Env: BENCH_READS (file of "key id" lines).
dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
local reads = {}
for line in io.lines(os.getenv('BENCH_READS')) do
  local key, id = string.match(line, '^(%S+) (%S+)$')
  if key then reads[#reads + 1] = { key, id } end
end
local n = 0

function request()
  n = n + 1
  local r = reads[n % #reads + 1]
  return wrk.format('GET', '/api/v1/payment-intents/' .. r[2], { ['authorization'] = 'Bearer ' .. r[1] })
end
