/**
 * The composition root: the one place that knows every layer. It opens storage and the bus
 * per the config and starts what this process's roles (ANMPAY_ROLES) run:
 *
 * - gateway: the merchant HTTP API on PORT (commands applied to actors directly, and the
 *   outbox rows they write relayed at once), the snapshot feed for checkout streams;
 * - runtime: the actor-event consumer, timers, the chain-signal router, webhook intake and
 *   delivery;
 * - indexer: one chain follower per network, lease-guarded (extra processes stand by);
 * - marketplace: the marketplace app on MARKETPLACE_PORT (listings, quotes, purchases, the
 *   x402 facilitator), and with ANMPAY_DEMO_SELLER=1 the demo seller on DEMO_SELLER_PORT,
 *   listed in it (demo-seller.ts).
 *
 * The in-process devnet runs when a process that needs a chain has no RPC URL for it, which
 * `checkRoles` allows only to a process running every role.
 */
import path from 'node:path';
import type { Db } from '../storage/db.ts';
import { lockDataDir, type DataDirLock } from '../storage/data-dir-lock.ts';
import { openDb } from '../storage/open.ts';
import { MemoryBus } from '../runtime/bus/memory-bus.ts';
import { NatsBus } from '../runtime/bus/nats-bus.ts';
import type { Bus, Subscription } from '../runtime/bus/types.ts';
import type { Config } from '../runtime/config.ts';
import { machineRegistry } from '../runtime/machines.ts';
import { Engine } from '../runtime/engine/runtime.ts';
import { demoBanner } from '../runtime/merchant/bootstrap.ts';
import { openMerchantServices } from '../runtime/merchant/index.ts';
import { openDashboardServices } from '../runtime/dashboard/index.ts';
import { openCommerceServices, startHoldFollower } from '../runtime/commerce/index.ts';
import { WebhookRuntime } from '../runtime/webhooks/service.ts';
import { startDevnetServer, type DevnetServer } from '../runtime/chain/devnet/server.ts';
import { startChainIndexers, type ChainIndexers } from '../runtime/chain/indexer/start.ts';
import { startChainRouter } from '../runtime/chain/indexer/router.ts';
import { AnmRpcClient } from '../runtime/chain/rpc-client.ts';
import { loadOperatorToken } from '../runtime/operator-token.ts';
import { OpsConsole } from '../runtime/ops/console.ts';
import { LoginLimits } from '../runtime/sessions/login-limits.ts';
import { SessionStore } from '../runtime/sessions/store.ts';
import { startHttp, type HttpEdge } from '../gateway/server.ts';
import type { MarketEdge } from '../gateway/market/server.ts';
import { startMetricsServer, type MetricsServer } from '../gateway/http/metrics-server.ts';
import { Scanner } from '../runtime/market/scanner/scanner.ts';
import { configuredUsdcToken } from '../runtime/market/lanes/usdc-ledger.ts';
import { demoSellerOrigin } from '../gateway/demo-seller/origin.ts';
import { RecordedDemoOrigin } from '../runtime/market/seller/demo-origin.ts';
import type { DemoSeller } from './demo-seller.ts';
import { marketWorkerIndex, type MarketWorkers } from './market-workers.ts';
import { startMarketplaceFor, startMarketWorkersFor } from './marketplace-role.ts';
import { checkRoles, listening, probePort } from './startup.ts';

export interface Services {
  config: Config;
  db: Db;
  bus: Bus;
  engine: Engine;
  /** The merchant HTTP server on HOST:PORT (gateway role). */
  http?: HttpEdge;
  /** The marketplace on HOST:MARKETPLACE_PORT (marketplace role). */
  marketplace?: MarketEdge;
  /** The marketplace's worker processes on HOST:MARKETPLACE_PORT instead (MARKET_WORKERS above 1). */
  marketWorkers?: MarketWorkers;
  /** Webhook intake and delivery (runtime role). */
  webhooks?: WebhookRuntime;
  /** Both devnets' JSON-RPC on DEVNET_PORT (`/test`, `/live`), when this process runs them. */
  devnet?: DevnetServer;
  /** Chain followers (indexer role). */
  chain?: ChainIndexers;
  /** `/metrics` alone on METRICS_PORT, when set. */
  metrics?: MetricsServer;
  /** The demo seller on DEMO_SELLER_PORT (marketplace role, ANMPAY_DEMO_SELLER=1). */
  demoSeller?: DemoSeller;
  log(msg: string): void;
  stop(): Promise<void>;
}

/** Starts this process's roles; on a failure part-way, stops what had started and rethrows. */
export async function startServices(config: Config): Promise<Services> {
  // A marketplace worker (ADR 0051) names itself: its lines share the primary's stdout.
  const worker = marketWorkerIndex();
  const log = (msg: string): void => {
    if (config.LOG_LEVEL !== 'silent') process.stdout.write(`${JSON.stringify({ level: 'info', time: Date.now(), msg: worker === undefined ? msg : `market worker ${worker}: ${msg}` })}\n`);
  };
  checkRoles(config);
  const roles = config.ANMPAY_ROLES;
  const needsChain = roles.has('gateway') || roles.has('indexer');
  const inProcessDevnet = needsChain && (!config.ANM_TEST_RPC_URL || !config.ANM_RPC_URL);
  const withDemoSeller = roles.has('marketplace') && (config.ANMPAY_DEMO_SELLER ?? (config.DATABASE_URL ? '0' : '1')) === '1';
  // The x402 seller packages take seconds to load: started now, they load while the store opens
  // (in the process serving the marketplace: a primary over workers serves no demo seller itself).
  const demoModule = withDemoSeller && (config.MARKET_WORKERS === 1 || worker !== undefined) ? import('./demo-seller.ts') : undefined;
  demoModule?.catch(() => undefined);
  // Stopped in reverse order of starting: the HTTP edge first (stop taking requests), storage last.
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    // The lock comes before PGlite opens: a second process on the same directory must not touch it.
    if (!config.DATABASE_URL || inProcessDevnet) {
      const lock: DataDirLock = await lockDataDir(config.ANMPAY_DATA_DIR);
      stops.push(() => lock.release());
    }
    if (roles.has('gateway')) await probePort('PORT', config.HOST, config.PORT);
    if (inProcessDevnet) await probePort('DEVNET_PORT', config.HOST, config.DEVNET_PORT);
    // A worker's ports are the primary's, which probed them (and its listens go through the primary).
    if (roles.has('marketplace') && worker === undefined) await probePort('MARKETPLACE_PORT', config.HOST, config.MARKETPLACE_PORT);
    if (withDemoSeller && worker === undefined) await probePort('DEMO_SELLER_PORT', config.HOST, config.DEMO_SELLER_PORT);
    if (config.METRICS_PORT !== undefined) await probePort('METRICS_PORT', config.HOST, config.METRICS_PORT);
    const db = await openDb({ databaseUrl: config.DATABASE_URL, dataDir: config.pgDataDir, schema: config.ANMPAY_DB_SCHEMA, poolSize: config.DATABASE_POOL_SIZE });
    stops.push(() => db.close());
    const bus: Bus = config.NATS_URL ? await NatsBus.connect({ url: config.NATS_URL, ...(config.NATS_NAMESPACE && { namespace: config.NATS_NAMESPACE }) }) : new MemoryBus();
    stops.push(() => bus.close());
    log(`roles: ${[...roles].join(', ')}; storage: ${db.kind === 'postgres' ? 'PostgreSQL' : `PGlite in ${config.pgDataDir}`}; bus: ${bus.kind === 'nats' ? `NATS JetStream at ${config.NATS_URL}` : 'in-process'}`);

    const registry = machineRegistry();
    // The scanner probes the rounds this process's runtime applies; it needs the engine's host, hence the late binding.
    let scanner: Scanner | undefined;
    let demoSeller: DemoSeller | undefined;
    // The one loopback origin the scanner and routed execution reach without the switch (ADR 0037):
    // the demo seller's, where it listens, or at its configured port when market workers serve it;
    // in a process that serves none, as the process serving it recorded it (ADR 0073).
    const demoOrigin = (): string | undefined =>
      demoSeller?.url ?? (withDemoSeller && config.DEMO_SELLER_PORT !== 0 ? demoSellerOrigin(config.HOST, config.DEMO_SELLER_PORT) : undefined);
    const recordedDemo = new RecordedDemoOrigin(db);
    const sellerOrigin = { allows: (origin: string): boolean => origin === demoOrigin() || recordedDemo.allows(origin), refresh: () => recordedDemo.refresh() };
    const engine = new Engine({ db, bus, registry, ackWaitMs: config.NATS_ACK_WAIT_MS, hooks: { afterCommit: (r, e) => scanner?.afterCommit(r, e) } });
    const runtime = roles.has('runtime');
    if (runtime || roles.has('marketplace')) {
      scanner = new Scanner(db, engine.host, {
        // Probed like routed execution reaches it, or the demo listings would only ever go offline.
        forward: { allowPrivate: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1', allowOrigin: sellerOrigin.allows, refreshAllowOrigin: sellerOrigin.refresh },
        intervalMs: config.ANMPAY_SCAN_INTERVAL_S * 1000,
        concurrency: config.ANMPAY_SCAN_CONCURRENCY,
        // The token and chain a seller's 402 must name: the configured lane's (USDC_TOKEN_*, USDC_NETWORK), on either ledger.
        usdcToken: configuredUsdcToken(config),
        onError: (err) => log(`scanner: ${err instanceof Error ? err.message : String(err)}`),
      });
    }
    // This process's own demo seller listens only after the marketplace starts, below: probes wait for it.
    let demoListening: (() => void) | undefined;
    if (scanner && demoModule && worker === undefined) scanner.holdProbes(new Promise<void>((resolve) => (demoListening = resolve)));
    stops.push(async () => demoListening?.());
    await engine.start({ feed: roles.has('gateway'), consumer: runtime, sweeper: runtime });
    stops.push(() => engine.stop());
    if (runtime && scanner) {
      // Listings from before the scanner have no probe timer: their rounds start here, in the background.
      const stopping = new AbortController();
      const resuming = scanner
        .resumeRounds({ signal: stopping.signal })
        .then((n) => n > 0 && log(`scanner: probe rounds resumed for ${n} listing(s) without a probe timer`))
        .catch((err: unknown) => log(`scanner: resuming probe rounds failed: ${err instanceof Error ? err.message : String(err)}`));
      stops.push(async () => {
        stopping.abort();
        await resuming;
      });
    }
    let webhooks: WebhookRuntime | undefined;
    if (runtime) {
      const router: Subscription = await startChainRouter(bus, engine.host, { ackWaitMs: config.NATS_ACK_WAIT_MS });
      stops.push(() => router.stop());
      const hooks = new WebhookRuntime(db, bus, {
        allowPrivate: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1',
        worker: { leaseMs: config.ANMPAY_WEBHOOK_LEASE_MS },
        intake: { ackWaitMs: config.NATS_ACK_WAIT_MS },
        log,
      });
      await hooks.start();
      stops.push(() => hooks.stop());
      const holds = await startHoldFollower(bus, engine.host, { ackWaitMs: config.NATS_ACK_WAIT_MS });
      stops.push(() => holds.stop());
      webhooks = hooks;
    }

    let devnet: DevnetServer | undefined;
    if (inProcessDevnet) {
      // The devnet's chains live in the data directory: a restart resumes them instead of looking like a reorg to the indexer.
      const devnetDir = path.join(config.ANMPAY_DATA_DIR, 'devnet');
      const started = await listening('DEVNET_PORT', config.HOST, config.DEVNET_PORT, () =>
        startDevnetServer({ port: config.DEVNET_PORT, host: config.HOST, blockMs: config.DEVNET_BLOCK_MS, dataDir: devnetDir }),
      );
      stops.push(() => started.close());
      devnet = started;
      log(
        `devnet: JSON-RPC at ${started.url}/test (chain id 1001, head ${started.nodes.test.height}) and ${started.url}/live (chain id 1, head ${started.nodes.live.height}); chains in ${devnetDir}; ${config.DEVNET_BLOCK_MS ? `a block every ${config.DEVNET_BLOCK_MS} ms` : 'mining on request only'}`,
      );
    }
    const testRpc = config.ANM_TEST_RPC_URL ?? `${devnet?.url ?? ''}/test`;
    const liveRpc = config.ANM_RPC_URL ?? `${devnet?.url ?? ''}/live`;

    let chain: ChainIndexers | undefined;
    if (roles.has('indexer')) {
      const indexers = startChainIndexers({
        db,
        bus,
        rpcUrls: { test: testRpc, live: liveRpc },
        onError: (err) => log(`indexer: ${err instanceof Error ? err.message : String(err)}`),
        // ADR 0033: intents an older indexer left waiting for a transfer the chain has.
        onReconciled: (network, ids) => log(`indexer: reconciled ${ids.length} ${network} intent(s) with the chain: ${ids.join(', ')}`),
      });
      stops.push(() => indexers.stop());
      chain = indexers;
    }
    let marketplace: MarketEdge | undefined;
    let marketWorkers: MarketWorkers | undefined;
    // The ANM lane needs a node for `native:1`: the configured one, or this process's devnet.
    const anmRpcUrl = config.ANM_RPC_URL ?? (devnet ? `${devnet.url}/live` : undefined);
    if (roles.has('marketplace') && config.MARKET_WORKERS > 1 && worker === undefined) {
      const started = await startMarketWorkersFor(config, anmRpcUrl, log);
      stops.push(() => started.stop());
      marketWorkers = started;
      log(`marketplace listening on ${started.url} (${config.MARKET_WORKERS} worker processes)`);
    } else if (roles.has('marketplace')) {
      // Of several workers, worker 0 alone runs the seller-leg watch and the key sweep (ADR 0051).
      const started = await startMarketplaceFor(config, db, engine, anmRpcUrl, sellerOrigin, scanner, (worker ?? 0) === 0);
      stops.push(() => started.close());
      marketplace = started;
      log(`marketplace listening on ${started.url}`);
      if (demoModule) {
        const demo = await (await demoModule).startDemoSellerFor(config, db, started, log);
        stops.push(() => demo.close());
        demoSeller = demo;
      }
    }
    demoListening?.();

    let http: HttpEdge | undefined;
    if (roles.has('gateway')) {
      const merchant = await openMerchantServices(db, config);
      const rpc = { test: new AnmRpcClient(testRpc), live: new AnmRpcClient(liveRpc) };
      const edge = await listening('PORT', config.HOST, config.PORT, () =>
        startHttp(
          {
            ...merchant,
            dashboard: openDashboardServices(db, { openSignup: config.ANMPAY_OPEN_SIGNUP === '1', shopDirectory: config.ANMPAY_SHOP_DIRECTORY === '1' }),
            commerce: openCommerceServices(db, { payPerIpPerMinute: config.ANMPAY_LINK_PAY_PER_MIN }),
            host: engine.host,
            feed: engine.feed,
            webhookAdmin: {
              db,
              allowPrivateWebhooks: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1',
              rotationGraceMs: config.ANMPAY_WEBHOOK_ROTATION_GRACE_S * 1000,
              onRedeliver: () => webhooks?.worker.nudge(),
            },
            chain: rpc,
            opsConsole: {
              console: new OpsConsole(db, registry, { test: () => rpc.test.blockNumber(), live: () => rpc.live.blockNumber() }),
              feed: engine.feed,
              sessions: new SessionStore(db),
              loginLimits: new LoginLimits(db),
            },
            marketplaceUrl: () => config.MARKETPLACE_PUBLIC_URL ?? (config.PUBLIC_BASE_URL ? undefined : (marketplace ?? marketWorkers)?.url),
            dbHealthy: () => db.query('SELECT 1').then(() => true, () => false),
            logger: config.LOG_LEVEL === 'silent' ? false : { level: config.LOG_LEVEL },
          },
          { host: config.HOST, port: config.PORT, publicBaseUrl: config.PUBLIC_BASE_URL, drainMs: config.HTTP_DRAIN_MS },
        ),
      );
      stops.push(() => edge.close());
      http = edge;
      log(`merchant API listening on ${edge.url}`);
      if (merchant.demo) process.stdout.write(demoBanner(merchant.demo, config.PUBLIC_BASE_URL ?? edge.url));
      if (merchant.demo && demoSeller && marketplace) process.stdout.write((await demoModule!).demoSellerBanner(demoSeller, marketplace.url));
    }
    let metrics: MetricsServer | undefined;
    if (config.METRICS_PORT !== undefined) {
      const operatorToken = await loadOperatorToken(config.ANMPAY_DATA_DIR, config.ANMPAY_OPERATOR_TOKEN);
      const port = config.METRICS_PORT;
      const started = await listening('METRICS_PORT', config.HOST, port, () => startMetricsServer({ host: config.HOST, port, operatorToken }));
      stops.push(() => started.close());
      metrics = started;
      log(`metrics at ${started.url}/metrics (operator token as bearer)`);
    }
    // Runs first on stop: both ports answer 503 at once, so HTTP_DRAIN_MS is waited once, not once per port.
    stops.push(async () => {
      http?.drain();
      marketplace?.drain();
    });
    log('started');
    return {
      config,
      db,
      bus,
      engine,
      ...(http && { http }),
      ...(marketplace && { marketplace }),
      ...(marketWorkers && { marketWorkers }),
      ...(webhooks && { webhooks }),
      ...(devnet && { devnet }),
      ...(chain && { chain }),
      ...(metrics && { metrics }),
      ...(demoSeller && { demoSeller }),
      log,
      async stop() {
        await stopAll();
        log('stopped');
      },
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}
