-- bench:links: POST (a buyer pressing Pay, empty form) or GET (the product page) round-robin
-- over payment-link paths. Env: BENCH_PATHS (comma-separated), BENCH_METHOD (POST | GET).
dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
local paths = {}
for p in string.gmatch(os.getenv('BENCH_PATHS'), '[^,]+') do paths[#paths + 1] = p end
local method = os.getenv('BENCH_METHOD')
local n = 0

function request()
  n = n + 1
  local p = paths[n % #paths + 1]
  if method == 'POST' then
    return wrk.format('POST', p, { ['content-type'] = 'application/x-www-form-urlencoded' }, '')
  end
  return wrk.format('GET', p)
end
