-- POST /api/v1/payment-intents with a fresh Idempotency-Key per request, keys round-robin.
-- Env: BENCH_KEYS (comma-separated secret keys), BENCH_RUN (unique per run).
dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
local keys = {}
for k in string.gmatch(os.getenv('BENCH_KEYS'), '[^,]+') do keys[#keys + 1] = k end
local run = os.getenv('BENCH_RUN')
local n = 0
local thread_no = 0

function setup(thread)
  thread_no = thread_no + 1
  thread:set('tid', thread_no)
end

function request()
  n = n + 1
  local headers = {
    ['authorization'] = 'Bearer ' .. keys[n % #keys + 1],
    ['idempotency-key'] = 'bench-' .. run .. '-' .. tostring(tid) .. '-' .. n,
    ['content-type'] = 'application/json',
  }
  return wrk.format('POST', '/api/v1/payment-intents', headers, '{"amount":"1.25","description":"bench","metadata":{"i":' .. n .. '}}')
end
