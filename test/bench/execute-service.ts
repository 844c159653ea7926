/**
 * bench:execute's marketplace, deployed one of two ways (BENCH_EXECUTE_MODE):
 *
 * - `workers`: as `npm start` serves it with MARKET_WORKERS (ADR 0051):
 *   BENCH_MARKET_WORKERS (default 1) market-serve.ts processes sharing one port, each with its
 *   own pool, actor host and outbox relay (SERVE_ROUTED=1), the ANM node a devnet in a process
 *   of its own. The bench's process registers the listing and funds the buyers; the quotes are
 *   asked of the workers over HTTP.
 * - `process` (the default): the marketplace app, its relay and (on ANM) the devnet in the bench's own
 *   process, next to the load (and the seller with BENCH_SELLER=here): one event loop does it all.
 *
 * Either way the bench's process keeps an actor host, a market and an outbox relay of its own
 * for that preparation.
 */
import type http from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import type { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import type { Backend } from '../helpers/backends.ts';
import { traceExecutions, type ExecuteTrace } from './execute-trace.ts';
import { marketAnmRpc, spawnDevnet, spawnMarketServe } from './serve-children.ts';
import { StatementCounter, type StatementCounts } from './statement-count.ts';

export type ExecuteMode = 'workers' | 'process';

export interface ExecuteService {
  /** The marketplace's base URL. */
  url: string;
  /** One line on how it is deployed, for the report's header. */
  label: string;
  /** The bench process's market: the simulated ledger's faucet and balances, and the quotes in `process` mode. */
  market: MarketServices;
  /** The ANM node's client, when the ANM lane runs. */
  rpc: AnmRpcClient | null;
  /** CPU seconds so far of the marketplace's own processes, when they are not the bench's. */
  cpu?: () => number;
  /** Starts counting the marketplace's statements; `end` gives the counts since. */
  begin(): Promise<void>;
  end(): Promise<StatementCounts>;
  /** BENCH_TRACE=1, in `process` mode only: the marks need the marketplace in this process. */
  trace: ExecuteTrace | null;
  stop(): Promise<void>;
}

export async function openExecuteService(o: {
  mode: ExecuteMode;
  workers: number;
  backend: Backend;
  anm: boolean;
  fee: { USDC: string; ANM: string };
  sellerUrl: string;
  benchAgent: http.Agent;
  /** For the label: whether the seller and the saturated load share this process. */
  sellerHere: boolean;
  loadHere: boolean;
}): Promise<ExecuteService> {
  const { backend } = o;
  const inProcess = o.mode === 'process';
  const devnet = !o.anm ? null : inProcess ? await startDevnetServer({ port: 0, blockMs: 0 }) : null;
  // market-serve's workers need a node URL whatever the lanes: an idle devnet costs nothing.
  const devnetChild = inProcess ? null : await spawnDevnet();
  const devnetUrl = devnet?.url ?? devnetChild?.url;
  const rpc = devnetUrl ? marketAnmRpc(`${devnetUrl}/live`) : null;

  // In `process` mode these are the marketplace's own, so its statements are counted here.
  const counter = new StatementCounter();
  const db = inProcess ? counter.market(backend.db) : backend.db;
  const relay = new OutboxRelay(inProcess ? counter.relay(backend.db) : backend.db, backend.bus);
  const host = new ActorHost({ db, bus: backend.bus, registry: machineRegistry(), onOutbox: () => relay.nudge() });
  relay.start();
  const market = openMarket(db, host, { feeAddresses: o.fee, forward: { allowPrivate: true }, ...(rpc && o.anm && { anm: { rpc } }) });
  const resourceId = resourceIdOf('POST', o.sellerUrl);
  // Before the workers start: each loads the listings as it starts.
  await host.apply({ kind: 'listing', id: resourceId }, {
    type: 'listing.register', id: 'r1', at: Date.now(), resource_id: resourceId, provider_id: 'prov_b0b0', name: 'answer service', description: 'The answer', category: 'answer', tags: ['answer'],
    endpoint: o.sellerUrl, method: 'POST', model: 'per_call', documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
    assets: [{ asset: 'USDC', pay_to: privateKeyToAccount(generatePrivateKey()).address, seller_price_atomic: '20000' }, { asset: 'ANM', pay_to: generateWallet('live').address, seller_price_atomic: '250000000' }],
  });
  await market.start(60_000, { watch: inProcess });
  const stopOwn = async (): Promise<void> => {
    await relay.stop();
    market.stop();
  };

  if (inProcess) {
    counter.watchAnswers(market);
    const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
    const trace = process.env.BENCH_TRACE === '1' ? traceExecutions({ app, db: backend.db, market, sellerPath: new URL(o.sellerUrl).pathname, benchAgent: o.benchAgent }) : null;
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      url,
      label: `the marketplace and the outbox relay in this process${o.sellerHere ? ', the seller too' : ''}${o.loadHere ? ', the saturated load too' : ''}`,
      market,
      rpc,
      async begin() {
        counter.take();
      },
      end: () => Promise.resolve(counter.take()),
      trace,
      async stop() {
        await stopOwn();
        await app.close();
        await devnet?.close();
      },
    };
  }

  const serve = await spawnMarketServe({
    // The young generation `npm start` gives the service.
    nodeArgs: ['--max-semi-space-size=32'],
    env: {
      SERVE_WORKERS: String(o.workers),
      SERVE_ROUTED: '1',
      SERVE_SCHEMA: backend.schema!,
      SERVE_NAMESPACE: backend.namespace!,
      SERVE_POOL: String(Math.ceil(16 / o.workers)),
      SERVE_ANM_RPC: `${devnetUrl!}/live`,
      SERVE_FEE_USDC: o.fee.USDC,
      SERVE_FEE_ANM: o.fee.ANM,
    },
  });
  return {
    url: serve.url,
    label: `the marketplace as ${o.workers} worker process(es) on one port and their primary (market-serve.ts, BENCH_MARKET_WORKERS); saturated load from another process; the devnet in its own`,
    market,
    rpc,
    cpu: () => serve.cpu(),
    begin: () => serve.begin(),
    end: async () => (await serve.end()).counts,
    trace: null,
    async stop() {
      await serve.stop();
      await stopOwn();
      devnetChild?.close();
    },
  };
}
