import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot } from '../kit/step.ts';
import { chainSignals, type ChainStep, refundCreate, transferHistory } from '../../test/fixtures/refund.ts';
import { refundDefinition as def } from './definition.ts';

/**
 * Refund chain signals in any order (ADR 0016): each states what is true at the indexer's
 * position `pos`, so any delivery order (with redeliveries) must end where the indexer's
 * order ends.
 */
const REQUIRED = 3;
const createEv = { ...refundCreate, required_confirmations: REQUIRED };
const { seen, included, depth, reorged, dropped } = chainSignals;

function run(events: readonly unknown[]) {
  let snap: PersistedSnapshot = create(def, def.events.parse(createEv)).snapshot;
  let status = 'REQUIRES_SIGNATURE';
  for (const e of events) {
    const r = step(def, snap, def.events.parse(e));
    snap = r.snapshot;
    status = r.status;
  }
  const ctx = snap.context as { tx_hash: string | null; block_height: number | null; confirmations: number };
  return { status, tx: ctx.tx_hash, height: ctx.block_height, confirmations: ctx.confirmations };
}

describe('refund, chain signals in any order', () => {
  // Indexer order: included@1, reorged@2, seen@3 (back in the mempool), dropped@4.
  const history = [included(1, 10, 10), reorged(2, 11), seen(3), dropped(4)];
  const rows: Array<[string, unknown[]]> = [
    ['in order', history],
    ['seen overtakes the reorg', [history[0], history[2], history[1], history[3]]],
    ['drop overtakes reorg and seen', [history[0], history[3], history[1], history[2]]],
    ['fully reversed', [...history].reverse()],
    ['the reorg comes last', [history[0], history[2], history[3], history[1]]],
    ['seen and drop first', [history[2], history[3], history[0], history[1]]],
  ];
  it.each(rows)('included@1, reorged@2, seen@3, dropped@4 (%s) ends REQUIRES_SIGNATURE without a transfer', (_name, events) => {
    expect(run(events)).toEqual({ status: 'REQUIRES_SIGNATURE', tx: null, height: null, confirmations: 0 });
  });

  it('a newer seen of the included transfer leaves the block: SUBMITTED, and the older reorg is stale', () => {
    expect(run([included(1, 10, 10), seen(3)]).status).toBe('SUBMITTED');
    const r = run([included(1, 10, 10), seen(3), reorged(2, 11)]);
    expect(r).toEqual({ status: 'SUBMITTED', tx: 'tx1', height: null, confirmations: 0 });
  });

  it('an older depth report does not take confirmations back', () => {
    const r = run([included(1, 10, 10), depth(3, 1, 11), depth(2, 1, 10)]);
    expect(r).toEqual({ status: 'CONFIRMING', tx: 'tx1', height: 10, confirmations: 2 });
  });

  it('signals without a position keep their rules: a seen in CONFIRMING moves nothing', () => {
    const { pos: _p, ...plainSeen } = seen(3);
    const r = run([included(1, 10, 10), plainSeen]);
    expect(r.status).toBe('CONFIRMING');
    expect(r.height).toBe(10);
  });

  /** A chain history of the refund transfer, as the indexer emits it (positions increase). */
  const historyArb = fc.array(fc.constantFrom<ChainStep>('seen', 'include', 'depth', 'reorg', 'drop'), { maxLength: 14 }).map((steps) => transferHistory(steps, REQUIRED));

  it('every permutation with redeliveries ends where in-order delivery ends (property)', () => {
    fc.assert(
      fc.property(
        historyArb.chain((events) =>
          fc
            .subarray(events)
            .chain((dups) => fc.tuple(fc.constant(events), fc.shuffledSubarray([...events, ...dups], { minLength: events.length + dups.length }))),
        ),
        ([events, delivered]) => {
          expect(run(delivered)).toEqual(run(events));
        },
      ),
      { numRuns: 500 },
    );
  });
});
