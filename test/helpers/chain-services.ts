/**
 * Service processes for the multi-process chain tests (test/helpers/chain-child.ts: engine,
 * indexer and chain router on real PostgreSQL + NATS), and what those tests do to them:
 * SIGSTOP / SIGCONT pauses as a long GC pause or a slow disk would.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export class ChainServices {
  private readonly running = new Set<ChildProcess>();

  /** Starts one service process and resolves once it is ready. */
  start(env: Record<string, string>): Promise<ChildProcess> {
    const p = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/chain-child.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.add(p);
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', () => this.running.delete(p));
    return new Promise((resolve, reject) => {
      p.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(p));
      p.on('exit', (code) => reject(new Error(`service exited ${code}: ${err}`)));
    });
  }

  /** Ends every process still running (SIGTERM lets them close their connections; SIGKILL does not wait). */
  stop(signal: NodeJS.Signals = 'SIGKILL'): void {
    for (const p of this.running) {
      p.kill('SIGCONT');
      p.kill(signal);
    }
    if (signal === 'SIGKILL') this.running.clear();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops `p` for `ms` milliseconds, then lets it run again. */
export async function pause(p: ChildProcess, ms: number): Promise<void> {
  p.kill('SIGSTOP');
  try {
    await sleep(ms);
  } finally {
    p.kill('SIGCONT');
  }
}
