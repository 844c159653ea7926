import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot, type StepResult } from '../kit/step.ts';
import { chainSignals, type ChainStep, REFUND_T, refundCreate, transferHistory } from '../../test/fixtures/refund.ts';
import { refundDefinition as def } from './definition.ts';

/**
 * A CONFIRMED refund whose transfer a reorg deeper than its confirmations takes back
 * (ADR 0033): positional news that its block left the chain moves the refund where the
 * in-order run would be (SUBMITTED while the transfer waits for a block again,
 * REQUIRES_SIGNATURE once dropped), tells the merchant (`refund.reorged`) and the intent
 * (`refund.reverted`, numbered), and a re-inclusion confirms it again as a new fact.
 */
const T = REFUND_T;
const REQUIRED = 3;
const createEv = { ...refundCreate, required_confirmations: REQUIRED };
const { seen, included, depth, reorged, dropped } = chainSignals;

interface Run {
  last: StepResult;
  status: string;
  ctx: { tx_hash: string | null; block_height: number | null; confirmations: number };
  /** Every outcome sent to the intent, in order: type and number. */
  toIntent: Array<[string, number]>;
  /** Every webhook: type and the block it names. */
  hooks: Array<[string, string | null]>;
}
function run(events: readonly unknown[]): Run {
  let snap: PersistedSnapshot = create(def, def.events.parse(createEv)).snapshot;
  let last: StepResult | null = null;
  const toIntent: Array<[string, number]> = [];
  const hooks: Array<[string, string | null]> = [];
  for (const e of events) {
    last = step(def, snap, def.events.parse(e));
    snap = JSON.parse(JSON.stringify(last.snapshot)) as PersistedSnapshot;
    for (const fx of last.effects) {
      if (fx.type === 'sendTo') {
        const ev = fx.params.event as unknown as { type: string; seq: number };
        toIntent.push([ev.type, ev.seq]);
      }
      if (fx.type === 'emitWebhook') hooks.push([fx.params.type, (fx.params.data as { block_hash: string | null }).block_hash]);
    }
  }
  const ctx = snap.context as Run['ctx'];
  return { last: last!, status: last!.status, ctx: { tx_hash: ctx.tx_hash, block_height: ctx.block_height, confirmations: ctx.confirmations }, toIntent, hooks };
}

// Included at 10 (position 1), three deep at position 3: CONFIRMED.
const settled = [included(1, 10, 10), depth(2, 1, 11), depth(3, 1, 12)];

describe('a confirmed refund taken back by a deep reorg (ADR 0033)', () => {
  it('reorged: SUBMITTED, the merchant and the intent are told, and re-inclusion confirms again as a new fact', () => {
    const r = run([...settled, reorged(4, 9)]);
    expect([r.status, r.ctx]).toEqual(['SUBMITTED', { tx_hash: 'tx1', block_height: null, confirmations: 0 }]);
    expect(r.toIntent).toEqual([['refund.confirmed', 1], ['refund.reverted', 2]]);
    expect(r.hooks).toEqual([['refund.completed', 'b10@1'], ['refund.reorged', 'b10@1']]);
    const again = run([...settled, reorged(4, 9), included(5, 10, 10), depth(6, 5, 12)]);
    expect(again.status).toBe('CONFIRMED');
    expect(again.toIntent).toEqual([['refund.confirmed', 1], ['refund.reverted', 2], ['refund.confirmed', 3]]);
    expect(again.hooks.at(-1)).toEqual(['refund.completed', 'b10@5']);
  });

  it('dropped: REQUIRES_SIGNATURE with the unsigned timer again; a cancel then releases it (outcome 3)', () => {
    const r = run([...settled, dropped(4)]);
    expect([r.status, r.ctx]).toEqual(['REQUIRES_SIGNATURE', { tx_hash: null, block_height: null, confirmations: 0 }]);
    expect(r.last.effects.some((f) => f.type === 'scheduleTimer')).toBe(true);
    expect(r.hooks.at(-1)).toEqual(['refund.reorged', 'b10@1']);
    const canceled = run([...settled, dropped(4), { type: 'refund.cancel', id: 'x', at: T + 9 }]);
    expect([canceled.status, canceled.toIntent]).toEqual(['CANCELED', [['refund.confirmed', 1], ['refund.reverted', 2], ['refund.released', 3]]]);
  });

  it('an inclusion in another block that overtakes the reorg reverses and re-evaluates in one step', () => {
    const deep = run([...settled, included(5, 11, 14)]);
    expect([deep.status, deep.toIntent]).toEqual(['CONFIRMED', [['refund.confirmed', 1], ['refund.reverted', 2], ['refund.confirmed', 3]]]);
    const shallow = run([...settled, included(5, 11, 11)]);
    expect([shallow.status, shallow.ctx]).toEqual(['CONFIRMING', { tx_hash: 'tx1', block_height: 11, confirmations: 1 }]);
    // The reorg that came first in the indexer's order is stale now.
    expect(step(def, shallow.last.snapshot, def.events.parse(reorged(4, 9))).accepted).toBe(false);
  });

  it('keeps CONFIRMED for older news, the same block applied again, and signals without positions', () => {
    const r = run(settled);
    const older = step(def, r.last.snapshot, def.events.parse({ ...seen(0) }));
    expect([older.accepted, older.status]).toEqual([false, 'CONFIRMED']);
    const again = step(def, r.last.snapshot, def.events.parse(included(7, 10, 13, 'b10@1')));
    expect([again.status, again.effects]).toEqual(['CONFIRMED', []]);
    const { pos: _p, ...plain } = reorged(8, 9);
    expect(step(def, r.last.snapshot, def.events.parse(plain)).accepted).toBe(false);
  });

  /** A chain history of the transfer with reorgs at any depth, as the indexer emits it (positions increase). */
  const historyArb = fc.array(fc.constantFrom<ChainStep>('seen', 'include', 'depth', 'reorg', 'drop'), { maxLength: 18 }).map((steps) => transferHistory(steps));
  // Confirmed, reorged out, re-mined and confirmed again; delivered with the re-inclusion's depth first.
  const example = [...settled, reorged(4, 9), seen(5), included(6, 10, 10), depth(7, 6, 11), depth(8, 6, 12)];

  it('every permutation with redeliveries ends where in-order delivery ends, the books balance (property)', () => {
    fc.assert(
      fc.property(
        historyArb.chain((events) =>
          fc.subarray(events).chain((dups) => fc.tuple(fc.constant(events), fc.shuffledSubarray([...events, ...dups], { minLength: events.length + dups.length }))),
        ),
        ([events, delivered]) => {
          const inOrder = run(events.length ? events : [seen(1)]);
          const got = run(delivered.length ? delivered : [seen(1)]);
          // A confirmed refund stops counting confirmations: a delivery that hears a later depth first counts more.
          const seenAs = (r: Run) => (r.status === 'CONFIRMED' ? { ...r.ctx, confirmations: r.ctx.confirmations >= REQUIRED } : r.ctx);
          expect([got.status, seenAs(got)]).toEqual([inOrder.status, seenAs(inOrder)]);
          for (const r of [inOrder, got]) {
            // The intent's newest outcome says CONFIRMED exactly when the refund is; numbers grow.
            expect(r.toIntent.at(-1)?.[0] === 'refund.confirmed').toBe(r.status === 'CONFIRMED');
            expect(r.toIntent.map(([, n]) => n)).toEqual(r.toIntent.map((_, i) => i + 1));
            // The merchant's books: completions minus reorgs is 1 exactly when CONFIRMED, never above.
            let open = 0;
            for (const [type] of r.hooks) {
              open += type === 'refund.completed' ? 1 : type === 'refund.reorged' ? -1 : 0;
              expect(open).toBeGreaterThanOrEqual(0);
              expect(open).toBeLessThanOrEqual(1);
            }
            expect(open === 1).toBe(r.status === 'CONFIRMED');
          }
          // Nothing the chain never did: every completion a shuffled delivery announces names a block the in-order one did.
          const blocks = new Set(inOrder.hooks.filter(([t]) => t === 'refund.completed').map(([, b]) => b));
          for (const [t, b] of got.hooks) if (t === 'refund.completed') expect(blocks.has(b)).toBe(true);
        },
      ),
      { numRuns: 500, examples: [[[example, [depth(8, 6, 12), ...example.slice(0, 7), example[4]!]]]] },
    );
  });
});
