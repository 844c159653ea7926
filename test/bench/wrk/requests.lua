-- A fixed number of requests read from a file, sent in order (round robin past its end).
-- Each line: method, path, body (empty for none), then header name and value pairs, all
-- separated by tabs. Env: BENCH_REQUESTS_FILE, BENCH_REQUESTS (responses to wait for).
dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
local ffi = require('ffi')
ffi.cdef('int getpid(void); int kill(int pid, int sig);')

local function split(s)
  local out, i = {}, 1
  while true do
    local j = string.find(s, '\t', i, true)
    if not j then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end

local lines = {}
for line in io.lines(os.getenv('BENCH_REQUESTS_FILE')) do
  if #line > 0 then lines[#lines + 1] = line end
end
local limit = tonumber(os.getenv('BENCH_REQUESTS'))
local reqs = {}
local n = 0
local answered = 0

-- Formatted once, after wrk has set the Host header, so request() only hands out strings.
function init(args)
  for _, line in ipairs(lines) do
    local f = split(line)
    local headers = {}
    for k = 4, #f - 1, 2 do headers[f[k]] = f[k + 1] end
    local body = nil
    if f[3] ~= '' then
      body = f[3]
      headers['content-type'] = 'application/json'
    end
    reqs[#reqs + 1] = wrk.format(f[1], f[2], headers, body)
  end
end

function request()
  n = n + 1
  return reqs[(n - 1) % #reqs + 1]
end

-- wrk runs for its -d duration whatever a thread does; at the count, this thread stops and
-- the SIGINT that wrk handles as Ctrl-C wakes the main thread to report at once.
function response()
  answered = answered + 1
  if answered == limit then
    wrk.thread:stop()
    ffi.C.kill(ffi.C.getpid(), 2)
  end
end
