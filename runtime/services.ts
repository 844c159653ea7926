import type { Db } from '../storage/db.ts';
import { openDb } from '../storage/open.ts';
import { MemoryBus } from './bus/memory-bus.ts';
import { NatsBus } from './bus/nats-bus.ts';
import type { Bus } from './bus/types.ts';
import type { Config } from './config.ts';
import { machineRegistry } from './machines.ts';
import { Engine } from './engine/runtime.ts';
import { demoBanner } from './merchant/bootstrap.ts';
import { openMerchantServices } from './merchant/index.ts';
// The composition root is the one runtime file that knows the edge: it starts the HTTP server.
// eslint-disable-next-line no-restricted-imports
import { startHttp, type HttpEdge } from '../gateway/server.ts';
import { WebhookRuntime } from './webhooks/service.ts';
import { startDevnetServer, type DevnetServer } from './chain/devnet/server.ts';
import { startChainFollowers, type ChainFollowers } from './chain/indexer/start.ts';
import { AnmRpcClient } from './chain/rpc-client.ts';

export interface Services {
  config: Config;
  db: Db;
  bus: Bus;
  engine: Engine;
  /** The merchant HTTP server on HOST:PORT. */
  http: HttpEdge;
  webhooks: WebhookRuntime;
  /** Both devnets' JSON-RPC on DEVNET_PORT (`/test`, `/live`); in-process for `npm start`. */
  devnet: DevnetServer;
  chain: ChainFollowers;
  log(msg: string): void;
  stop(): Promise<void>;
}

/** Opens storage and bus per the config and starts the engine. */
export async function startServices(config: Config): Promise<Services> {
  const log = (msg: string): void => {
    if (config.LOG_LEVEL !== 'silent') process.stdout.write(`${JSON.stringify({ level: 'info', time: Date.now(), msg })}\n`);
  };
  const db = await openDb({ databaseUrl: config.DATABASE_URL, dataDir: config.pgDataDir, schema: config.ANMPAY_DB_SCHEMA, poolSize: config.DATABASE_POOL_SIZE });
  const bus: Bus = config.NATS_URL ? await NatsBus.connect({ url: config.NATS_URL, ...(config.NATS_NAMESPACE && { namespace: config.NATS_NAMESPACE }) }) : new MemoryBus();
  log(`storage: ${db.kind === 'postgres' ? 'PostgreSQL' : `PGlite in ${config.pgDataDir}`}; bus: ${bus.kind === 'nats' ? `NATS JetStream at ${config.NATS_URL}` : 'in-process'}`);
  const engine = new Engine({ db, bus, registry: machineRegistry() });
  await engine.start();
  const webhooks = new WebhookRuntime(db, bus, { allowPrivate: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1', log });
  await webhooks.start();
  const devnet = await startDevnetServer({ port: config.DEVNET_PORT, host: config.HOST, blockMs: config.DEVNET_BLOCK_MS });
  log(`devnet: JSON-RPC at ${devnet.url}/test (chain id 1001) and ${devnet.url}/live (chain id 1); ${config.DEVNET_BLOCK_MS ? `a block every ${config.DEVNET_BLOCK_MS} ms` : 'mining on request only'}`);
  const testRpc = config.ANM_TEST_RPC_URL ?? `${devnet.url}/test`;
  const liveRpc = config.ANM_RPC_URL ?? `${devnet.url}/live`;
  const chain = await startChainFollowers({
    db,
    bus,
    host: engine.host,
    rpcUrls: { test: testRpc, live: liveRpc },
    onError: (err) => log(`indexer: ${err instanceof Error ? err.message : String(err)}`),
  });
  log('runtime started');
  const merchant = await openMerchantServices(db, config);
  const http = await startHttp(
    {
      ...merchant,
      host: engine.host,
      feed: engine.feed,
      webhookAdmin: {
        db,
        allowPrivateWebhooks: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1',
        rotationGraceMs: config.ANMPAY_WEBHOOK_ROTATION_GRACE_S * 1000,
        onRedeliver: () => webhooks.worker.nudge(),
      },
      chain: { test: new AnmRpcClient(testRpc), live: new AnmRpcClient(liveRpc) },
      dbHealthy: () => db.query('SELECT 1').then(() => true, () => false),
      logger: config.LOG_LEVEL === 'silent' ? false : { level: config.LOG_LEVEL },
    },
    { host: config.HOST, port: config.PORT, publicBaseUrl: config.PUBLIC_BASE_URL, drainMs: config.HTTP_DRAIN_MS },
  );
  log(`merchant API listening on ${http.url}`);
  if (merchant.demo) process.stdout.write(demoBanner(merchant.demo, config.PUBLIC_BASE_URL ?? http.url));
  return {
    config,
    db,
    bus,
    engine,
    http,
    webhooks,
    devnet,
    chain,
    log,
    async stop() {
      // Stop taking requests first: /healthz turns 503, the listener closes, in-flight requests finish.
      await http.close();
      await chain.stop();
      await devnet.close();
      await webhooks.stop();
      await engine.stop();
      await bus.close();
      await db.close();
      log('stopped');
    },
  };
}
