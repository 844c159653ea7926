/**
 * The marketplace's runtime wired over one database and actor host: listings and their
 * search index, the USDC lane (on the simulated EIP-3009 ledger unless another ledger, such
 * as the viem JSON-RPC one, is given), purchases and the facilitator. The gateway's `buildMarketApp` takes what this returns.
 */
import { MARKET_LANES, type MarketAsset } from '../../machines/money/market.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { Executions } from './executions.ts';
import { Facilitator } from './facilitator.ts';
import type { ForwardOptions } from './forward.ts';
import { UsdcLane } from './lanes/usdc-lane.ts';
import { AnmLane, type AnmNode } from './lanes/anm-lane.ts';
import { AnmNonceHolds } from './anm-nonce-holds.ts';
import type { UsdcLedger, UsdcToken } from './lanes/usdc-ledger.ts';
import { UsdcSimLedger } from './lanes/usdc-sim.ts';
import { Listings } from './listings.ts';
import { PurchaseKeys } from './purchase-keys.ts';
import { Purchases } from './purchases.ts';
import { Scanner } from './scanner/scanner.ts';
import { SearchIndex } from './search-index.ts';

/** As the merchant gateway's sweep of its keys (gateway/server.ts). */
const KEY_SWEEP_MS = 10 * 60_000;

export interface MarketServices {
  listings: Listings;
  index: SearchIndex;
  /** The simulated ledger (faucet, balances); the lane settles on it unless given `usdcLedger`. */
  ledger: UsdcSimLedger;
  usdc: UsdcLane;
  /** The ANM lane, when a node is connected. */
  anm: AnmLane | undefined;
  purchases: Purchases;
  /** Routed execution (`POST /api/v1/route/execute`). */
  executions: Executions;
  /** Idempotency-Keys of purchases (ADR 0026). */
  purchaseKeys: PurchaseKeys;
  facilitator: Facilitator;
  /** Probes listings: the rounds of this process's runtime and an operator's scan-now. */
  scanner: Scanner;
  feeAddresses: Record<MarketAsset, string>;
  /** True when the database answers: the marketplace port's `/healthz`. */
  dbHealthy(): Promise<boolean>;
  /**
   * Loads the index and starts its catch-up and, unless `watch` is false, the seller-leg watch
   * and the sweep of old purchase keys (one of several marketplace workers runs those, ADR 0051).
   */
  start(pollMs?: number, opts?: { watch?: boolean }): Promise<void>;
  stop(): void;
}

export interface AnmLaneOptions {
  /** The node of DESIGN §3 serving `native:1` (chain id 1): the devnet's `/live`, or a real node. */
  rpc: AnmNode;
  /** Confirmations at which a leg counts as settled (12, DESIGN §3; lower for tests only). */
  confirmations?: number;
  /** How long the facilitator's settle waits for a receipt. */
  inclusionWaitMs?: number;
}

export function openMarket(
  db: Db,
  host: ActorHost,
  opts: {
    feeAddresses: Record<MarketAsset, string>;
    clock?: () => number;
    anm?: AnmLaneOptions | undefined;
    usdcLedger?: UsdcLedger;
    usdcToken?: UsdcToken | undefined;
    forward?: ForwardOptions;
    scanner?: Scanner;
    firstProbeMaxMs?: number;
    /** After a takeover probe, the listing's next attempt waits this long (ADR 0072; 10 s when absent). */
    takeoverCooldownMs?: number;
    /** New-key purchase claims of one turn per statement at most (ADR 0093); 1 sends each alone. */
    claimBatch?: number;
  },
): MarketServices {
  const clock = opts.clock ?? Date.now;
  const ledger = new UsdcSimLedger(db, opts.usdcToken);
  const usdc = new UsdcLane(opts.usdcLedger ?? ledger, clock);
  // Private and loopback sellers are refused unless the development switch says otherwise.
  const forward = opts.forward ?? { allowPrivate: false };
  // The scanner and a takeover's proof match a seller's USDC offer against the lane's own token and chain.
  const usdcToken = { usdcToken: usdc.token };
  // A takeover's proof reaches the endpoint as the scanner and routed execution do (ADR 0072).
  const listings = new Listings(db, host, clock, { USDC: usdc.network, ANM: MARKET_LANES.ANM.network }, opts.firstProbeMaxMs, { forward, ...usdcToken }, opts.takeoverCooldownMs);
  const index = new SearchIndex(listings);
  const anm = opts.anm ? new AnmLane(opts.anm.rpc, new AnmNonceHolds(db), clock, opts.anm.inclusionWaitMs) : undefined;
  const purchases = new Purchases({ db, host, index, usdc, anm, anmConfirmations: opts.anm?.confirmations, feeAddresses: opts.feeAddresses, clock });
  const purchaseKeys = new PurchaseKeys(db, opts.claimBatch);
  const executions = new Executions({ db, host, purchases, listings, usdc, anm, forward, clock });
  let watch: NodeJS.Timeout | undefined;
  let sweep: NodeJS.Timeout | undefined;
  return {
    listings,
    index,
    ledger,
    usdc,
    purchases,
    executions,
    anm,
    purchaseKeys,
    facilitator: new Facilitator(usdc, db, anm),
    // The runtime's scanner when this process runs one; else one for scan-now alone.
    scanner: opts.scanner ?? new Scanner(db, host, { forward, ...usdcToken }),
    feeAddresses: opts.feeAddresses,
    dbHealthy: () => db.query('SELECT 1').then(() => true, () => false),
    async start(pollMs = 1000, { watch: watching = true } = {}) {
      await index.refresh();
      index.start(pollMs);
      if (!watching) return;
      const tick = (): void => {
        watch = setTimeout(() => void Promise.all([purchases.reconcile(), executions.reconcile()]).catch(() => undefined).finally(() => watch && tick()), pollMs);
        watch.unref();
      };
      tick();
      sweep = setInterval(() => void purchaseKeys.sweep().catch(() => undefined), KEY_SWEEP_MS);
      sweep.unref();
    },
    stop() {
      clearInterval(sweep);
      index.stop();
      clearTimeout(watch);
      watch = undefined;
    },
  };
}
