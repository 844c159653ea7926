/**
 * marketplace.md:14 "The ledger enforces `gross = seller + fee`" on the purchase machine: a
 * purchase whose quoted total is not its seller price plus its fee takes neither a purchase's
 * legs (`purchase.verify`) nor a routed execution (`purchase.execute`), even legs that pay
 * exactly the quoted seller and fee, so nothing after them can settle a leg. The same events on a
 * quote that adds up are taken: the refusal is the total's doing.
 */
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot } from '../kit/step.ts';
import { priceSplit } from '../money/market.ts';
import type { PurchaseContext } from './context.ts';
import { purchaseDefinition } from './definition.ts';

const T = 1_800_000_000_000;
const split = priceSplit('USDC', 20_000n);
const parse = (e: unknown) => purchaseDefinition.events.parse(e);
const leg = (pay_to: string, amount: bigint, nonce: string) => ({ pay_to, amount: amount.toString(), payer: '0xb', nonce, valid_before: T + 600_000, payload: {} });

function quoted(total: bigint): PersistedSnapshot {
  const quote = parse({
    type: 'purchase.quote', id: 'q', at: T, intent_id: 'pi_1', resource_id: 'res_1', asset: 'USDC', network: 'eip155:8453', scheme: 'exact-split',
    seller: { pay_to: '0xs', amount: split.seller.toString() }, fee: { pay_to: '0xf', amount: split.fee.toString() }, total: total.toString(), fee_bps: 50, expires_at: T + 300_000,
  });
  return create(purchaseDefinition, quote).snapshot;
}

/** The events of a purchase, or of a routed execution, that would settle both legs of a quote that adds up. */
const PURCHASE = [
  { type: 'purchase.verify', id: 'v', at: T + 1_000, legs: { seller: leg('0xs', split.seller, 'n1'), fee: leg('0xf', split.fee, 'n2') } },
  { type: 'leg.settled', id: 's1', at: T + 2_000, leg: 'seller', tx: 'tx_s', transfer: { from: '0xb', to: '0xs', value: split.seller.toString() } },
  { type: 'leg.settled', id: 's2', at: T + 3_000, leg: 'fee', tx: 'tx_f', transfer: { from: '0xb', to: '0xf', value: split.fee.toString() } },
];
const EXECUTION = [
  { type: 'purchase.execute', id: 'x', at: T + 1_000, fee: leg('0xf', split.fee, 'n3'), deadline_at: T + 46_000 },
  { type: 'execute.answered', id: 'a', at: T + 2_000, seller_status: 200, fee_tx: 'tx_f' },
  { type: 'execute.answered', id: 'a2', at: T + 2_000, seller_status: 200 },
  { type: 'leg.settled', id: 's2', at: T + 3_000, leg: 'fee', tx: 'tx_f', transfer: { from: '0xb', to: '0xf', value: split.fee.toString() } },
];

/** Each event in turn; what was taken, and where the purchase ended. */
function run(snap: PersistedSnapshot, events: readonly unknown[]): { taken: string[]; status: string; ctx: PurchaseContext } {
  const taken: string[] = [];
  let status = 'QUOTED';
  for (const e of events) {
    const r = step(purchaseDefinition, snap, parse(e));
    if (r.accepted) taken.push(r.snapshot.value as string);
    snap = r.snapshot;
    status = r.status;
  }
  return { taken, status, ctx: snap.context as PurchaseContext };
}

describe('gross = seller + fee (marketplace.md:14)', () => {
  const ADDS_UP = split.seller + split.fee;

  // Verification checks the total twice (grossHolds, and the legs' sum against it): only both gone would let it through.
  it('a quote whose total is seller + fee + 1: purchase.verify is not taken, no leg settles', () => {
    const r = run(quoted(ADDS_UP + 1n), PURCHASE);
    expect(r).toMatchObject({ taken: [], status: 'QUOTED' });
    expect(r.ctx.legs ?? null).toBeNull();
    // The control: the same legs on a total that adds up settle both.
    expect(run(quoted(ADDS_UP), PURCHASE).status).toBe('SETTLED');
  });

  it('a quote whose total is seller + fee + 1: purchase.execute is not taken, the fee never settles', () => {
    const r = run(quoted(ADDS_UP + 1n), EXECUTION);
    expect(r).toMatchObject({ taken: [], status: 'QUOTED' });
    expect(r.ctx.execution ?? null).toBeNull();
    expect(run(quoted(ADDS_UP), EXECUTION).status).toBe('SETTLED');
  });
});
