/**
 * The marketplace app over real HTTP on a fresh backend (PostgreSQL + NATS when reachable,
 * PGlite otherwise), listening on port 0.
 */
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildMarketApp } from '../../gateway/market/app.ts';
import type { MarketDeps } from '../../gateway/market/deps.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import type { ForwardOptions } from '../../runtime/market/forward.ts';
import type { UsdcLedger } from '../../runtime/market/lanes/usdc-ledger.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { request, type ReqOptions, type Res } from '../conformance/harness.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { encodeAddress, NETWORKS } from '../../machines/chain/index.ts';
import { startAnmChain, type AnmChain } from './anm-chain.ts';

export interface MarketHarness {
  url: string;
  backend: Backend;
  deps: MarketDeps;
  host: ActorHost;
  app: FastifyInstance;
  market: MarketServices;
  /** The marketplace's clock (Unix ms); tests move it with `skew`. */
  now(): number;
  skew: number;
  req(method: string, path: string, opts?: ReqOptions): Promise<Res>;
  /** The ANM lane's devnet, indexer and router, when asked for. */
  chain: AnmChain;
}

export const FEE_ADDRESSES = { USDC: '0x000000000000000000000000000000000000fee0', ANM: encodeAddress(NETWORKS.live.hrp, sha256(utf8ToBytes('test marketplace fee'))) } as const;

/**
 * `anm`: a devnet and indexer for the ANM lane, legs settled at `confirmations` (12 in production).
 * `usdcLedger`: the USDC lane's ledger, made once the test's earlier hooks ran (default: the simulated one).
 * `faucet`: the simulated ledger's faucet routes served.
 * `forward`: routed execution's SSRF switch and timeout (default: private targets refused, 30 s).
 */
export function useMarket(opts: { perIpPerMinute?: number; anm?: { confirmations: number }; usdcLedger?: () => UsdcLedger; faucet?: boolean; forward?: ForwardOptions } = {}): MarketHarness {
  const h = { skew: 0 } as MarketHarness;
  h.now = () => Date.now() + h.skew;
  beforeAll(async () => {
    h.backend = realAvailable ? await openReal() : await openEmbedded();
    h.host = new ActorHost({ db: h.backend.db, bus: h.backend.bus, registry: machineRegistry() });
    if (opts.anm) h.chain = await startAnmChain(h.backend, h.host);
    // The marketplace's own client batches its reads, as the gateway's does (rpc-batch.ts).
    const anm = opts.anm && { rpc: new AnmRpcClient(h.chain.rpc.url, { batchReads: true }), confirmations: opts.anm.confirmations, inclusionWaitMs: 5_000 };
    h.market = openMarket(h.backend.db, h.host, { feeAddresses: FEE_ADDRESSES, clock: () => h.now(), anm, ...(opts.usdcLedger ? { usdcLedger: opts.usdcLedger() } : {}), ...(opts.forward ? { forward: opts.forward } : {}) });
    h.deps = { ...h.market, perIpPerMinute: opts.perIpPerMinute ?? 1e6, ...(opts.faucet ? { usdcFaucet: h.market.ledger } : {}) };
    h.app = await buildMarketApp(h.deps);
    h.url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    h.req = (method, path, o) => request(h.url, method, path, o);
  }, 60_000);
  afterAll(async () => {
    await h.app?.close();
    if (opts.anm) await h.chain.stop();
    await h.backend?.close();
  });
  return h;
}
