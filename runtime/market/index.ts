/**
 * The marketplace's runtime wired over one database and actor host: listings and their
 * search index, the USDC lane on the simulated EIP-3009 ledger, purchases and the
 * facilitator. The gateway's `buildMarketApp` takes what this returns.
 */
import type { MarketAsset } from '../../machines/money/market.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { Facilitator } from './facilitator.ts';
import { UsdcLane } from './lanes/usdc-lane.ts';
import { UsdcSimLedger } from './lanes/usdc-sim.ts';
import { Listings } from './listings.ts';
import { Purchases } from './purchases.ts';
import { SearchIndex } from './search-index.ts';

export interface MarketServices {
  listings: Listings;
  index: SearchIndex;
  ledger: UsdcSimLedger;
  usdc: UsdcLane;
  purchases: Purchases;
  facilitator: Facilitator;
  feeAddresses: Record<MarketAsset, string>;
  /** Loads the index and starts the catch-up and the seller-leg watch. */
  start(pollMs?: number): Promise<void>;
  stop(): void;
}

export function openMarket(db: Db, host: ActorHost, opts: { feeAddresses: Record<MarketAsset, string>; clock?: () => number }): MarketServices {
  const clock = opts.clock ?? Date.now;
  const listings = new Listings(db, host, clock);
  const index = new SearchIndex(listings);
  const ledger = new UsdcSimLedger(db);
  const usdc = new UsdcLane(ledger, clock);
  const purchases = new Purchases({ db, host, index, usdc, feeAddresses: opts.feeAddresses, clock });
  let watch: NodeJS.Timeout | undefined;
  return {
    listings,
    index,
    ledger,
    usdc,
    purchases,
    facilitator: new Facilitator(usdc),
    feeAddresses: opts.feeAddresses,
    async start(pollMs = 1000) {
      await index.refresh();
      index.start(pollMs);
      const tick = (): void => {
        watch = setTimeout(() => void purchases.reconcile().catch(() => undefined).finally(() => watch && tick()), pollMs);
        watch.unref();
      };
      tick();
    },
    stop() {
      index.stop();
      clearTimeout(watch);
      watch = undefined;
    },
  };
}
