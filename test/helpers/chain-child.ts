/**
 * A service process for the multi-process chain test: engine (actor consumers, relay,
 * sweeper) plus indexer and chain router on real PostgreSQL + NATS, until SIGTERM.
 * Env: SCHEMA, NAMESPACE, RPC_URL (the devnet's test network).
 */
import { machineRegistry } from '../../runtime/machines.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { startChainIndexers } from '../../runtime/chain/indexer/start.ts';
import { startChainRouter } from '../../runtime/chain/indexer/router.ts';
import type { NetworkName } from '../../runtime/chain/indexer/indexer.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL } from './backends.ts';

const env = process.env;
const db = await openDb({ databaseUrl: DATABASE_URL, schema: env.SCHEMA });
const bus = await NatsBus.connect({ url: NATS_URL, namespace: env.NAMESPACE! });
const engine = new Engine({ db, bus, registry: machineRegistry(), sweeper: { pollMs: 100 } });
await engine.start();
const rpcUrls = { test: env.RPC_URL! } as Record<NetworkName, string>;
const router = await startChainRouter(bus, engine.host);
const chain = startChainIndexers({ db, bus, rpcUrls, onError: (e: unknown) => process.stderr.write(`indexer: ${e instanceof Error ? e.message : String(e)}\n`) });
process.on('SIGTERM', () => {
  void (async () => {
    await chain.stop();
    await router.stop();
    await engine.stop();
    await bus.close();
    await db.close();
    process.exit(0);
  })();
});
process.stdout.write('ready\n');
