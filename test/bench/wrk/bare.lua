dofile(os.getenv('BENCH_WRK_DIR') .. '/report.lua')
