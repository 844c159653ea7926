/**
 * For tests that drive the indexer by hand (tick by tick) on PGlite: a devnet with an actor
 * host, and a bus that records the actor events each publish stands for (as the chain router
 * would fan them out) instead of routing them.
 */
import { afterAll, beforeAll } from 'vitest';
import type { Bus } from '../../runtime/bus/types.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { signalEnvelopes } from '../../runtime/chain/indexer/signals.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import type { Db } from '../../storage/db.ts';
import { openEmbedded, type Backend } from './backends.ts';

/**
 * A holder that stopped renewing, once its lease ran out: the expiry moved to now instead of
 * waited for, since a lease short enough to wait out could also run out inside one slow pass.
 */
export async function leaseRunsOut(db: Db, network: string, holder: string): Promise<void> {
  await db.query(`UPDATE chain_leases SET expires_at = now() - interval '1 millisecond' WHERE network = $1 AND holder = $2`, [network, holder]);
}

/** Publishing to a subject in `failing` throws, as a lost NATS connection would. */
export function recordingBus(log: ActorEnvelope[], failing: ReadonlySet<string> = new Set()): Bus {
  const publish = async (subject: string, data: unknown): Promise<void> => {
    if (failing.has(subject)) throw new Error(`publish to ${subject} failed`);
    log.push(...signalEnvelopes(subject, JSON.parse(JSON.stringify(data)) as unknown));
  };
  return { publish } as unknown as Bus;
}

export interface EmbeddedChain {
  b: Backend;
  rpc: AnmRpcClient;
  host: ActorHost;
  close: () => Promise<void>;
}

/** PGlite, an ActorHost on it, and a devnet that mines only when asked. */
export async function embeddedChain(): Promise<EmbeddedChain> {
  const b = await openEmbedded();
  const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  const rpc = new AnmRpcClient(`${devnet.url}/test`);
  const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
  return {
    b,
    rpc,
    host,
    close: async () => {
      await devnet.close();
      await b.close();
    },
  };
}

/** One embedded chain for the test file: started before its tests, closed after them. */
export function useEmbeddedChain(): EmbeddedChain {
  const chain = {} as EmbeddedChain;
  beforeAll(async () => {
    Object.assign(chain, await embeddedChain());
  }, 120_000);
  afterAll(async () => chain.close?.());
  return chain;
}
