/** Small helpers shared by the benchmarks: percentiles and a concurrent driver. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface RunStats {
  ops: number;
  seconds: number;
  rate: number;
  p50: number;
  p99: number;
}

/** Runs `total` operations with `concurrency` workers; each op gets its index. */
export async function drive(total: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<RunStats> {
  const lat: number[] = new Array<number>(total);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t = performance.now();
        await op(i);
        lat[i] = performance.now() - t;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { ops: total, seconds, rate: total / seconds, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

export const fmt = (n: number, d = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
