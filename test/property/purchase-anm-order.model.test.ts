/**
 * ANM purchases and chain signals in any order (ADR 0016, DESIGN §3): histories the indexer
 * can produce for a purchase's two legs — the seller transfer included (sometimes reorged out
 * and re-included at another height), deepened to the settlement depth, then the fee transfer
 * included and deepened — delivered in order and in random permutations with duplicates. Every
 * delivery must end where the in-order one does, SETTLED with both legs' transfers, and none
 * may settle the fee before the seller or strand the purchase in VERIFIED.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot } from '../../machines/kit/step.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import { purchaseDefinition } from '../../machines/purchase/definition.ts';
import { priceSplit } from '../../machines/money/market.ts';

const T = 1_800_000_000_000;
const REQUIRED = 3;
const SELLER_TX = 'a'.repeat(64);
const FEE_TX = 'b'.repeat(64);
const split = priceSplit('ANM', 500_000_000n);
const quote = {
  type: 'purchase.quote', id: 'q', at: T, intent_id: 'pi_3', resource_id: 'res_3', asset: 'ANM', network: 'native:1', scheme: 'exact-anm-split',
  seller: { pay_to: 'anm1s', amount: split.seller.toString() }, fee: { pay_to: 'anm1f', amount: split.fee.toString() }, total: split.total.toString(), fee_bps: 50,
  expires_at: T + 300_000, required_confirmations: REQUIRED,
};
const leg = (payTo: string, amount: string, tx: string) => ({ pay_to: payTo, amount, payer: 'anm1b', nonce: tx, valid_before: T + 600_000, payload: {}, tx_hash: tx });
const verify = { type: 'purchase.verify', id: 'v', at: T + 1000, legs: { seller: leg('anm1s', quote.seller.amount, SELLER_TX), fee: leg('anm1f', quote.fee.amount, FEE_TX) } };

/** The signals of one chain history, in the order the indexer issues them (rising positions). */
function history(reorgs: number, gap: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let pos = 0;
  const at = T + 2000;
  const included = (tx: string, h: number): { pos: number; hash: string } => {
    pos += 1;
    const hash = `blk${h}@${pos}`;
    out.push({ type: 'chain.tx.included', id: `inc:${tx}:${hash}`, at, tx_hash: tx, from: 'anm1b', merchant_leg: '1', fee_leg: '0', block_height: h, block_hash: hash, receipt: 'success', head: h, pos });
    return { pos, hash };
  };
  const depth = (head: number, inclusion: number): void => {
    pos += 1;
    out.push({ type: 'chain.block', id: `blk:${head}@${pos}`, at, head, pos, inclusion });
  };
  let h = 1;
  let s = included(SELLER_TX, h);
  for (let r = 0; r < reorgs; r++) {
    depth(h + 1, s.pos);
    pos += 1;
    out.push({ type: 'chain.reorged', id: `reorg:${s.hash}@${pos}`, at, tx_hash: SELLER_TX, block_hash: s.hash, head: h, pos });
    h += 1 + r;
    s = included(SELLER_TX, h);
  }
  for (let d = 1; d < REQUIRED; d++) depth(h + d, s.pos);
  const fh = h + REQUIRED - 1 + gap;
  const f = included(FEE_TX, fh);
  for (let d = 1; d < REQUIRED; d++) depth(fh + d, f.pos);
  return out;
}

function deliver(events: Array<Record<string, unknown>>): { status: string; ctx: PurchaseContext } {
  let snap: PersistedSnapshot = create(purchaseDefinition, purchaseDefinition.events.parse(quote)).snapshot;
  let status = 'QUOTED';
  for (const raw of [verify, ...events]) {
    const r = step(purchaseDefinition, snap, purchaseDefinition.events.parse(raw));
    snap = r.snapshot;
    status = r.status;
    const ctx = snap.context as PurchaseContext;
    if (ctx.legs?.fee.tx && !ctx.legs.seller.tx) throw new Error('fee settled before the seller');
  }
  return { status, ctx: snap.context as PurchaseContext };
}

describe('ANM purchase: chain signals in any order (ADR 0016)', () => {
  it('in order, shuffled or duplicated, a history that settles both legs ends SETTLED with both transfers', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 4 }),
        fc.func(fc.integer()),
        fc.array(fc.nat(), { maxLength: 8 }),
        (reorgs, gap, order, dupes) => {
          const h = history(reorgs, gap);
          const inOrder = deliver(h);
          expect(inOrder.status).toBe('SETTLED');
          const shuffled = h.map((e, i) => ({ e, k: order(i) })).sort((a, b) => a.k - b.k).map((x) => x.e);
          for (const d of dupes) shuffled.splice(d % (shuffled.length + 1), 0, h[d % h.length]!);
          const got = deliver(shuffled);
          expect(got.status).toBe('SETTLED');
          expect([got.ctx.legs?.seller.tx, got.ctx.legs?.fee.tx]).toEqual([SELLER_TX, FEE_TX]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
