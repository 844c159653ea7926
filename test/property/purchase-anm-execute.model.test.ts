/**
 * Routed execution on the ANM lane (ADR 0038; DESIGN §5 "Routed execution"; ADR 0016): the
 * purchase watches the forwarded seller transfer (told by node look-ups, without positions)
 * and the fee transfer (the indexer's positional signals). Model suite over random events:
 * the fee counts as taken only with a served answer and both transfers `required` deep;
 * SELLER_FAILED never with the fee taken; terminal states accept nothing; replay equals the
 * snapshot. Order suite: the fee transfer's signals shuffled and duplicated end where the
 * in-order delivery does, SETTLED.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, step, type PersistedSnapshot } from '../../machines/kit/step.ts';
import type { EventBase } from '../../machines/kit/durable.ts';
import { legSettled } from '../../machines/purchase/chain-legs.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import { purchaseDefinition } from '../../machines/purchase/definition.ts';
import { TERMINAL } from '../../machines/purchase/view.ts';
import { priceSplit } from '../../machines/money/market.ts';
import { answerRuleAgrees } from './answer-status.ts';

const T = 1_800_000_000_000;
const REQUIRED = 3;
const SELLER_TX = 'a'.repeat(64);
const FEE_TX = 'b'.repeat(64);
const split = priceSplit('ANM', 250_000_000n);
const quote = {
  type: 'purchase.quote', id: 'q', at: T, intent_id: 'pi_4', resource_id: 'res_4', asset: 'ANM', network: 'native:1', scheme: 'exact-anm-split',
  seller: { pay_to: 'anm1s', amount: split.seller.toString() }, fee: { pay_to: 'anm1f', amount: split.fee.toString() }, total: split.total.toString(), fee_bps: 50,
  expires_at: T + 300_000, required_confirmations: REQUIRED,
};
const fee = { pay_to: 'anm1f', amount: split.fee.toString(), payer: 'anm1b', nonce: FEE_TX, valid_before: T + 600_000, payload: {}, tx_hash: FEE_TX };
const execute = { type: 'purchase.execute', at: T + 1000, fee, deadline_at: T + 46_000, seller_tx: SELLER_TX };
const included = (tx: string, h: number, head: number, pos?: number) => ({
  type: 'chain.tx.included', at: T + 2000, tx_hash: tx, from: 'anm1b', merchant_leg: '1', fee_leg: '0', block_height: h, block_hash: `blk${h}`, receipt: 'success', head, ...(pos !== undefined && { pos }),
});

const txArb = fc.constantFrom(SELLER_TX, FEE_TX, FEE_TX, 'c'.repeat(64));
const pos = fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined });
const eventArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(execute) },
  { weight: 2, arbitrary: fc.constantFrom(200, 302, 402, 500).map((st) => ({ type: 'execute.answered', at: T + 1500, seller_status: st })) },
  { weight: 1, arbitrary: fc.constant({ type: 'execute.failed', at: T + 1500, reason: 'timeout' }) },
  { weight: 1, arbitrary: fc.constantFrom('quote', 'execution', 'seller_deadline').map((t) => ({ type: 'timer.expired', at: T + 700_000, timer: t, generation: 1 })) },
  { weight: 1, arbitrary: fc.constant({ type: 'leg.failed', at: T + 2000, leg: 'fee', reason: 'x' }) },
  { weight: 1, arbitrary: fc.constant({ type: 'leg.settled', at: T + 2000, leg: 'fee', tx: FEE_TX, transfer: { from: 'anm1b', to: 'anm1f', value: split.fee.toString() } }) },
  {
    weight: 6,
    arbitrary: fc.oneof(
      fc.record({ tx: txArb, h: fc.integer({ min: 1, max: 6 }), head: fc.integer({ min: 1, max: 12 }), pos, ok: fc.boolean() }).map(({ tx, h, head, pos, ok }) => ({
        ...included(tx, h, Math.max(head, h), pos), receipt: ok || tx === SELLER_TX ? 'success' : 'failed',
      })),
      fc.record({ head: fc.integer({ min: 1, max: 14 }), pos, inclusion: pos }).map((b) => ({ type: 'chain.block', at: T + 3000, ...b })),
      fc.record({ tx: txArb, h: fc.integer({ min: 1, max: 6 }), pos }).map(({ tx, h, pos }) => ({ type: 'chain.reorged', at: T + 3000, tx_hash: tx, head: 6, block_hash: `blk${h}`, pos })),
      fc.record({ tx: txArb, pos }).map(({ tx, pos }) => ({ type: 'chain.tx.dropped', at: T + 3000, tx_hash: tx, pos })),
    ),
  },
);

type Raw = Record<string, unknown>;
/** Served, the seller transfer deep by a look-up, then the fee transfer included and deepened. */
const SETTLING: Raw[] = [{ type: 'execute.answered', at: T + 1500, seller_status: 200 }, included(SELLER_TX, 1, 3), included(FEE_TX, 3, 3, 1), { type: 'chain.block', at: T + 3000, head: 5, pos: 2, inclusion: 1 }];
/** Served, and the seller transfer never settles before the fee leg expires. */
const UNPAID: Raw[] = [{ type: 'execute.answered', at: T + 1500, seller_status: 200 }, { type: 'timer.expired', at: T + 700_000, timer: 'seller_deadline', generation: 1 }];
/** Both transfers deep before the answer is recorded (the buyer sent the fee transfer itself): a served answer then settles. */
const EARLY: Raw[] = [included(SELLER_TX, 1, 3), included(FEE_TX, 3, 3, 1), { type: 'chain.block', at: T + 3000, head: 5, pos: 2, inclusion: 1 }];

describe('ANM routed execution: purchase machine model (ADR 0038)', () => {
  it('fee taken only when served and both transfers deep; SELLER_FAILED never with the fee; replay equals the snapshot; the execute response says the status the answer leads to', () => {
    const reached = new Set<string>();
    const answered = new Set<string>();
    fc.assert(
      fc.property(fc.boolean(), fc.array(eventArb, { maxLength: 25 }), (executeFirst, raw) => {
        const events = [quote, ...[...(executeFirst ? [execute] : []), ...raw].map((e, i) => ({ ...e, id: `e${i}` }))].map((e) => purchaseDefinition.events.parse(e) as EventBase);
        let snap: PersistedSnapshot = create(purchaseDefinition, events[0]!).snapshot;
        let status = 'QUOTED';
        const applied: EventBase[] = [events[0]!];
        for (const e of events.slice(1)) {
          const r = step(purchaseDefinition, snap, e);
          if (TERMINAL.includes(status) && r.accepted) throw new Error(`terminal ${status} accepted ${e.type}`);
          if (r.accepted) applied.push(e);
          snap = r.snapshot;
          status = r.status;
          reached.add(status);
          if (status === 'EXECUTING') answerRuleAgrees(snap, T + 1500, answered);
          const ctx = snap.context as PurchaseContext;
          const ex = ctx.execution;
          const served = ex?.seller_status != null && ex.seller_status < 400;
          const deep = ctx.chain != null && legSettled(ctx.chain, 'seller') && legSettled(ctx.chain, 'fee');
          if (ex?.fee.tx && !(served && deep)) throw new Error('fee taken without a served answer and both transfers deep');
          if (status === 'SETTLED' && !(served && deep && ex?.fee.tx === FEE_TX)) throw new Error('SETTLED without the fee taken');
          if (status === 'SELLER_FAILED' && ex?.fee.tx) throw new Error('SELLER_FAILED with the fee taken');
        }
        if (JSON.stringify(replay(purchaseDefinition, applied)) !== JSON.stringify(snap)) throw new Error('replay differs from the snapshot');
      }),
      { numRuns: 500, examples: [[true, SETTLING], [true, UNPAID], [true, EARLY]] },
    );
    expect([...reached].sort()).toEqual(['EXECUTING', 'EXPIRED', 'FEE_FAILED', 'QUOTED', 'SELLER_FAILED', 'SETTLED']);
    expect([...answered].sort()).toEqual(['EXECUTING', 'SELLER_FAILED', 'SETTLED']);
  });

  it("the fee transfer's signals in any order, duplicated, with a reorg of it: SETTLED as in order", () => {
    /** The indexer's history of the fee transfer: included, reorged out `reorgs` times, re-included, deepened. */
    const history = (reorgs: number): Raw[] => {
      const out: Raw[] = [];
      let p = 0;
      let h = 4;
      let inc = ++p;
      out.push({ ...included(FEE_TX, h, h, inc), block_hash: `blk${h}@${inc}`, id: `inc${inc}` });
      for (let r = 0; r < reorgs; r++) {
        out.push({ type: 'chain.reorged', id: `reorg${++p}`, at: T + 3000, tx_hash: FEE_TX, head: h, block_hash: `blk${h}@${inc}`, pos: p });
        h += 1;
        inc = ++p;
        out.push({ ...included(FEE_TX, h, h, inc), block_hash: `blk${h}@${inc}`, id: `inc${inc}` });
      }
      for (let d = 1; d < REQUIRED; d++) out.push({ type: 'chain.block', id: `blk${++p}`, at: T + 3000, head: h + d, pos: p, inclusion: inc });
      return out;
    };
    const deliver = (fees: Raw[]) => {
      const prefix: Raw[] = [{ ...execute, id: 'x' }, { type: 'execute.answered', id: 'a', at: T + 1500, seller_status: 200 }, { ...included(SELLER_TX, 1, 3), id: 'look' }];
      let snap: PersistedSnapshot = create(purchaseDefinition, purchaseDefinition.events.parse(quote)).snapshot;
      let status = 'QUOTED';
      for (const raw of [...prefix, ...fees]) {
        const r = step(purchaseDefinition, snap, purchaseDefinition.events.parse(raw));
        snap = r.snapshot;
        status = r.status;
      }
      return { status, ctx: snap.context as PurchaseContext };
    };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.func(fc.integer()), fc.array(fc.nat(), { maxLength: 6 }), (reorgs, order, dupes) => {
        const h = history(reorgs);
        expect(deliver(h).status).toBe('SETTLED');
        const shuffled = h.map((e, i) => ({ e, k: order(i) })).sort((a, b) => a.k - b.k).map((x) => x.e);
        for (const d of dupes) shuffled.splice(d % (shuffled.length + 1), 0, h[d % h.length]!);
        const got = deliver(shuffled);
        expect(got.status).toBe('SETTLED');
        expect(got.ctx.execution?.fee.tx).toBe(FEE_TX);
      }),
      { numRuns: 300 },
    );
  });
});
