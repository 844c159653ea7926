/**
 * ADR 0051: of several marketplace workers, one runs the seller-leg watch and the sweep of
 * purchase keys. `start` without them still keeps the search index catching up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { openEmbedded, waitFor, type Backend } from '../helpers/backends.ts';
import { FEE_ADDRESSES } from './harness.ts';

let b: Backend;
beforeAll(async () => {
  b = await openEmbedded();
}, 180_000);
afterAll(async () => {
  await b?.close();
});

/** A market whose watch and index catch-up count their rounds instead of doing them. */
function counted(): { market: MarketServices; rounds: { watch: number; index: number } } {
  const market = openMarket(b.db, new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() }), { feeAddresses: FEE_ADDRESSES });
  const rounds = { watch: 0, index: 0 };
  market.purchases.reconcile = () => Promise.resolve(void rounds.watch++);
  const refresh = market.index.refresh.bind(market.index);
  market.index.refresh = () => (rounds.index++, refresh());
  return { market, rounds };
}

describe('market.start and the watch', () => {
  it('runs the watch by default, and not with watch: false, the index catching up either way', async () => {
    const on = counted();
    const off = counted();
    await on.market.start(20);
    await off.market.start(20, { watch: false });
    // Rounds counted, not a time waited: on a loaded machine a period can take much longer than 20 ms.
    await waitFor(async () => on.rounds.watch > 2 && off.rounds.index > 2, 10_000, 'three rounds of the watch and of the index');
    on.market.stop();
    off.market.stop();
    expect(on.rounds.watch).toBeGreaterThan(2);
    expect(off.rounds.watch).toBe(0);
    expect(off.rounds.index).toBeGreaterThan(2);
  });
});
