/**
 * The marketplace role's wiring in one place: its runtime over this process's engine, and its
 * app on MARKETPLACE_PORT.
 */
import type { Db } from '../storage/db.ts';
import type { Config } from '../runtime/config.ts';
import type { Engine } from '../runtime/engine/runtime.ts';
import { startMarketplace, type MarketEdge } from '../gateway/market/server.ts';
import { openConfiguredUsdcLedger } from '../runtime/market/lanes/usdc-viem.ts';
import { configuredUsdcToken } from '../runtime/market/lanes/usdc-ledger.ts';
import { loadOperatorToken } from '../runtime/operator-token.ts';
import type { Scanner } from '../runtime/market/scanner/scanner.ts';
import { startMarketWorkers, type MarketWorkers } from './market-workers.ts';
import { listening } from './startup.ts';

/** The marketplace in this process: its runtime over this process's engine, and its app. `watch`: ADR 0051. */
export async function startMarketplaceFor(
  config: Config,
  db: Db,
  engine: Engine,
  anmRpcUrl: string | undefined,
  sellerOrigin: { allows: (origin: string) => boolean; refresh: () => Promise<void> },
  scanner: Scanner | undefined,
  watch = true,
): Promise<MarketEdge> {
  const usdcLedger = await openConfiguredUsdcLedger(config);
  return listening('MARKETPLACE_PORT', config.HOST, config.MARKETPLACE_PORT, async () =>
    startMarketplace({
      db,
      usdcLedger,
      usdcToken: configuredUsdcToken(config),
      host: engine.host,
      listen: { host: config.HOST, port: config.MARKETPLACE_PORT },
      drainMs: config.HTTP_DRAIN_MS,
      feeAddresses: { USDC: config.MARKETPLACE_FEE_ADDRESS_USDC, ANM: config.MARKETPLACE_FEE_ADDRESS_ANM },
      // Not PUBLIC_BASE_URL: that is the merchant service's base, on another port.
      publicBaseUrl: config.MARKETPLACE_PUBLIC_URL,
      anmRpcUrl,
      allowPrivateTargets: config.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1',
      allowSellerOrigin: sellerOrigin.allows,
      refreshSellerOrigin: sellerOrigin.refresh,
      logger: config.LOG_LEVEL === 'silent' ? false : { level: config.LOG_LEVEL },
      operatorToken: await loadOperatorToken(config.ANMPAY_DATA_DIR, config.ANMPAY_OPERATOR_TOKEN),
      scanner,
      watch,
    }),
  );
}

/**
 * The marketplace in MARKET_WORKERS processes of its own (ADR 0051). They reach the ANM node
 * this process uses (its devnet's, when it runs one) and accept this process's operator token,
 * read here once so that no two workers create it at the same time.
 */
export async function startMarketWorkersFor(config: Config, anmRpcUrl: string | undefined, log: (msg: string) => void): Promise<MarketWorkers> {
  const operatorToken = await loadOperatorToken(config.ANMPAY_DATA_DIR, config.ANMPAY_OPERATOR_TOKEN);
  return startMarketWorkers({
    count: config.MARKET_WORKERS,
    env: { ANMPAY_OPERATOR_TOKEN: operatorToken, ...(anmRpcUrl && { ANM_RPC_URL: anmRpcUrl }) },
    log,
  });
}
