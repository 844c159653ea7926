-- GET one dashboard path, round-robin over logged-in sessions. Env: BENCH_COOKIES (file of
-- cookie values, one per line), BENCH_PATH.
dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
local cookies = {}
for line in io.lines(os.getenv('BENCH_COOKIES')) do
  if #line > 0 then cookies[#cookies + 1] = line end
end
local path = os.getenv('BENCH_PATH')
local n = 0

function request()
  n = n + 1
  return wrk.format('GET', path, { ['cookie'] = 'anm_session=' .. cookies[n % #cookies + 1] })
end
