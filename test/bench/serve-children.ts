/**
 * The processes a benchmark starts for the service it measures, each apart from the bench's
 * own: a devnet as the ANM node (devnet-serve.ts), bench:execute's seller (seller-serve.ts),
 * and the marketplace as market-serve.ts serves it (its workers and their primary), with the
 * begin/end protocol that brings back the workers' GC figures and statement counts.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { procCpu } from './proc-cpu.ts';
import type { StatementCounts } from './statement-count.ts';

export interface ServerChild {
  /** Its base URL (a devnet's: `/live`, `/test` under it). */
  url: string;
  pid: number;
  close(): void;
}

/** A server in a process of its own that prints one JSON line `{url}` and serves until its standard input closes. */
async function spawnServer(script: string): Promise<ServerChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, script)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, pid: child.pid!, close: () => child.stdin.end() };
}

/** The marketplace's client of a bench's ANM node: reads batched as in production (ADR 0107), one request each with BENCH_RPC_BATCH=0. */
export const marketAnmRpc = (url: string): AnmRpcClient => new AnmRpcClient(url, { batchReads: process.env.BENCH_RPC_BATCH !== '0' });

/** An empty devnet in a process of its own (mines only on request). */
export const spawnDevnet = (): Promise<ServerChild> => spawnServer('devnet-serve.ts');

/** bench:execute's seller in a process of its own (seller-serve.ts). */
export const spawnSeller = (): Promise<ServerChild> => spawnServer('seller-serve.ts');

/** What market-serve's workers report between `begin` and `end`: GC summed, stalls the longest, statements summed. */
export interface ServeStats {
  gcMs: number;
  stallMs: number;
  gcMaxMs: number;
  fullGcs: number;
  /** Summed over the workers (zero unless SERVE_ROUTED=1). */
  counts: StatementCounts;
}

export interface ServedMarket {
  url: string;
  bareUrl: string;
  /** The primary's pid, then the workers'. */
  pids: number[];
  /** CPU seconds so far of the primary and every worker. */
  cpu(): number;
  /** Starts the workers' counting, resolved once every worker has; `end` gives what they counted since. */
  begin(): Promise<void>;
  end(): Promise<ServeStats>;
  stop(): Promise<void>;
}

/** market-serve.ts with `env` (its SERVE_* settings), resolved once every worker serves. */
export async function spawnMarketServe(o: { env: Record<string, string>; nodeArgs?: readonly string[] }): Promise<ServedMarket> {
  const serve = spawn(process.execPath, [...(o.nodeArgs ?? []), '--import', 'tsx', path.join(import.meta.dirname, 'market-serve.ts')], {
    env: { ...process.env, ...o.env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: serve.stdout });
  const gone = new Promise<never>((_, reject) => serve.once('exit', (code) => reject(new Error(`market-serve exited with ${code}`))));
  gone.catch(() => undefined);
  const line = (prefix: string): Promise<string> =>
    Promise.race([
      new Promise<string>((resolve) => {
        const onLine = (l: string): void => {
          if (!l.startsWith(prefix)) return;
          lines.off('line', onLine);
          resolve(l.slice(prefix.length));
        };
        lines.on('line', onLine);
      }),
      gone,
    ]);
  const { url, bareUrl, pids } = JSON.parse(await line('SERVE_JSON ')) as { url: string; bareUrl: string; pids: number[] };
  return {
    url,
    bareUrl,
    pids,
    cpu: () => pids.reduce((a, pid) => a + procCpu(pid), 0),
    async begin() {
      const begun = line('BEGUN');
      serve.stdin.write('begin\n');
      await begun;
    },
    async end() {
      const stats = line('STATS_JSON ');
      serve.stdin.write('end\n');
      return JSON.parse(await stats) as ServeStats;
    },
    async stop() {
      const exited = new Promise((resolve) => serve.once('exit', resolve));
      serve.stdin.end();
      await exited;
    },
  };
}
