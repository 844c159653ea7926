/**
 * Starts the marketplace on MARKETPLACE_PORT over an engine's database and actor host
 * (DESIGN §6): the market runtime, its catch-up loops, and the HTTP app.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { FastifyServerOptions } from 'fastify';
import { encodeAddress, NETWORKS } from '../../machines/chain/index.ts';
import type { ActorHost } from '../../runtime/engine/actor-host.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { UsdcLedger, UsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import type { Scanner } from '../../runtime/market/scanner/scanner.ts';
import { drainer } from '../http/drain.ts';
import { buildMarketApp } from './app.ts';

export interface MarketEdge {
  url: string;
  market: MarketServices;
  /** From now on `/healthz` answers 503; `close()` waits out HTTP_DRAIN_MS from here. */
  drain(): void;
  close(): Promise<void>;
}

export interface MarketplaceOptions {
  db: Parameters<typeof openMarket>[0];
  host: ActorHost;
  listen: { host: string; port: number };
  /** HTTP_DRAIN_MS: on close, `/healthz` answers 503 this long before the listener closes (docs/deploy.md "Stopping"). */
  drainMs?: number | undefined;
  feeAddresses?: { USDC?: string | undefined; ANM?: string | undefined };
  /** The USDC lane's ledger when not the embedded simulation (runtime/market/lanes/usdc-viem.ts). */
  usdcLedger?: UsdcLedger | undefined;
  /** The configured USDC token and chain (USDC_TOKEN_*, USDC_NETWORK) the simulated ledger stands in for. */
  usdcToken?: UsdcToken | undefined;
  publicBaseUrl?: string | undefined;
  /** JSON-RPC of the ANM node for `native:1`; without it ANM purchases are refused (`unsupported_scheme`). */
  anmRpcUrl?: string | undefined;
  /** ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 (development): routed execution may reach private and loopback sellers. */
  allowPrivateTargets?: boolean | undefined;
  /** The one seller origin routed execution reaches on loopback without the switch: the project's demo seller (ADR 0037). */
  allowSellerOrigin?: ((origin: string) => boolean) | undefined;
  /** Re-reads that origin when a seller is refused: another process may serve the demo seller (ADR 0073). */
  refreshSellerOrigin?: (() => Promise<void>) | undefined;
  logger?: FastifyServerOptions['logger'];
  operatorToken?: string | undefined;
  /** False: this process runs no seller-leg watch and key sweep, another marketplace worker does (ADR 0051). */
  watch?: boolean | undefined;
  /** The process's scanner (bin/services.ts), serving scan-now too. */
  scanner?: Scanner | undefined;
}

/** Demo fee payees when none are configured: fixed, so fees are visible across restarts. */
const DEMO_FEE = {
  USDC: '0x000000000000000000000000000000000000fee5',
  ANM: encodeAddress(NETWORKS.live.hrp, sha256(utf8ToBytes('anmpay marketplace fee'))),
};

export async function startMarketplace(o: MarketplaceOptions): Promise<MarketEdge> {
  const market = openMarket(o.db, o.host, {
    feeAddresses: { USDC: o.feeAddresses?.USDC ?? DEMO_FEE.USDC, ANM: o.feeAddresses?.ANM ?? DEMO_FEE.ANM },
    anm: o.anmRpcUrl ? { rpc: new AnmRpcClient(o.anmRpcUrl, { batchReads: true }) } : undefined,
    ...(o.usdcLedger ? { usdcLedger: o.usdcLedger } : {}),
    usdcToken: o.usdcToken,
    forward: { allowPrivate: o.allowPrivateTargets ?? false, allowOrigin: o.allowSellerOrigin, refreshAllowOrigin: o.refreshSellerOrigin },
    ...(o.scanner ? { scanner: o.scanner } : {}),
  });
  await market.start(undefined, { watch: o.watch ?? true });
  // Play money only while the lane settles on the simulated ledger: its faucet serves `anmpay usdc fund`.
  const faucet = o.usdcLedger ? {} : { usdcFaucet: market.ledger };
  const { lifecycle, drain, drained } = drainer(o.drainMs);
  const app = await buildMarketApp({ ...market, ...faucet, lifecycle, publicBaseUrl: o.publicBaseUrl, logger: o.logger, operatorToken: o.operatorToken });
  const url = await app.listen({ host: o.listen.host, port: o.listen.port });
  return {
    url,
    market,
    drain,
    async close() {
      await drained();
      market.stop();
      await app.close();
    },
  };
}
