import type { FastifyServerOptions } from 'fastify';
import type { Executions } from '../../runtime/market/executions.ts';
import type { Facilitator } from '../../runtime/market/facilitator.ts';
import type { Listings } from '../../runtime/market/listings.ts';
import type { PurchaseKeys } from '../../runtime/market/purchase-keys.ts';
import type { Purchases } from '../../runtime/market/purchases.ts';
import type { Scanner } from '../../runtime/market/scanner/scanner.ts';
import type { SearchIndex } from '../../runtime/market/search-index.ts';
import type { UsdcSimLedger } from '../../runtime/market/lanes/usdc-sim.ts';
import type { UsdcLane } from '../../runtime/market/lanes/usdc-lane.ts';

/** What the marketplace's HTTP app needs; the composition root builds it. */
export interface MarketDeps {
  listings: Listings;
  index: SearchIndex;
  purchases: Purchases;
  executions: Executions;
  purchaseKeys: PurchaseKeys;
  /** Probes a listing now for an operator (`POST /api/v1/resources/{id}/scan`, `anmpay market scan`). */
  scanner?: Scanner;
  facilitator: Facilitator;
  /** The USDC lane's token and network, as configured: discovery documents name them. */
  usdc: Pick<UsdcLane, 'token' | 'network'>;
  /** Where the marketplace's fees are paid, per asset (`/.well-known/x402-marketplace`). */
  feeAddresses: { USDC: string; ANM: string };
  /** Base URL used in discovery documents; derived from the request when absent. */
  publicBaseUrl?: string | undefined;
  /** Requests per minute per IP on quote, purchase and execute (DESIGN §5: 60). */
  perIpPerMinute?: number;
  /** The simulated USDC ledger, when it is the lane: its faucet and balances are served (usdc-faucet.ts). */
  usdcFaucet?: UsdcSimLedger | undefined;
  logger?: FastifyServerOptions['logger'];
  /** True when the database answers (`/healthz`). */
  dbHealthy: () => Promise<boolean>;
  /** Set while the process drains: `/healthz` answers 503 (gateway/http/drain.ts). Absent: never draining. */
  lifecycle?: { draining: boolean };
  /** Bearer token for `/metrics` (the operator token); without it `/metrics` is not served. */
  operatorToken?: string | undefined;
}
