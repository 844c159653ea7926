/**
 * Service processes for the multi-process chain tests (test/helpers/chain-child.ts: engine,
 * indexer and chain router on real PostgreSQL + NATS), and what those tests do to them:
 * SIGSTOP / SIGCONT pauses as a long GC pause or a slow disk would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateWallet, type Wallet } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openReal, type Backend } from './backends.ts';

export class ChainServices {
  private readonly running = new Set<ChildProcess>();
  /** What each process wrote to stderr (indexer errors), for a failing test's message. */
  readonly stderr = new Map<ChildProcess, string>();

  /** Starts one service process and resolves once it is ready. */
  start(env: Record<string, string>): Promise<ChildProcess> {
    const p = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/chain-child.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.add(p);
    let err = '';
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      this.stderr.set(p, err.slice(-4000));
    });
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

/** A devnet, a funded payer and two service processes following it on real PostgreSQL + NATS. */
export interface ChainWorld {
  b: Backend;
  rpc: AnmRpcClient;
  /** An in-test host on the same schema, for what the gateway would apply. */
  host: ActorHost;
  treasury: Wallet;
  payer: Wallet;
  procs: ChildProcess[];
  state: (id: string) => Promise<string | undefined>;
  close: () => Promise<void>;
}

export async function chainWorld(services: ChainServices): Promise<ChainWorld> {
  const b = await openReal();
  const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  const close = async () => {
    services.stop('SIGTERM');
    await devnet.close();
    await b.close();
  };
  try {
    const rpc = new AnmRpcClient(`${devnet.url}/test`);
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
    const treasury = generateWallet('test');
    const payer = generateWallet('test');
    await rpc.faucet(payer.address, 1_000_000_000_000n);
    await rpc.mine(5);
    const env = { SCHEMA: b.schema!, NAMESPACE: b.namespace!, RPC_URL: `${devnet.url}/test` };
    const procs = [await services.start(env), await services.start(env)];
    const state = async (id: string) => (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id])).rows[0]?.state;
    return { b, rpc, host, treasury, payer, procs, state, close };
  } catch (err) {
    await close();
    throw err;
  }
}
