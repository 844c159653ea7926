import { describe, expect, it } from 'vitest';
import { create, step, type StepResult } from '../kit/step.ts';
import { REFUND_T, refundCreate, refundLegs } from '../../test/fixtures/refund.ts';
import { refundDefinition } from './definition.ts';
import type { RefundEvent } from './events.ts';

const T = REFUND_T;
const createEv = refundCreate;
const legs = refundLegs;
const inc = (head: number, receipt: 'success' | 'failed' = 'success') => ({ type: 'chain.tx.included', id: `i${head}`, at: T + 1, ...legs, block_height: 10, block_hash: 'b10', receipt, head }) as const;

function run(events: readonly unknown[]) {
  let r: StepResult = create(refundDefinition, refundDefinition.events.parse(createEv));
  const effects = [...r.effects];
  for (const e of events) {
    const next = step(refundDefinition, r.snapshot, refundDefinition.events.parse(e));
    effects.push(...next.effects);
    r = next;
  }
  return { status: r.status, ctx: (r.snapshot.context as { confirmations: number; tx_hash: string | null }), effects };
}

// DESIGN.md §4 "Refunds": REQUIRES_SIGNATURE → SUBMITTED → CONFIRMING → CONFIRMED; FAILED; CANCELED.
describe('refund machine (DESIGN §4 Refunds)', () => {
  const rows: Array<[string, RefundEvent[] | unknown[], string]> = [
    ['create → REQUIRES_SIGNATURE', [], 'REQUIRES_SIGNATURE'],
    ['signed tx posted → SUBMITTED', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }], 'SUBMITTED'],
    ['transfer seen in the mempool → SUBMITTED', [{ type: 'chain.tx.seen', id: 's', at: T, ...legs }], 'SUBMITTED'],
    ['a transfer short of the amount is not the refund', [{ type: 'chain.tx.seen', id: 's', at: T, ...legs, merchant_leg: '499' }], 'REQUIRES_SIGNATURE'],
    ['included, depth < 12 → CONFIRMING', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, inc(11)], 'CONFIRMING'],
    ['depth 12 → CONFIRMED', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, inc(11), { type: 'chain.block', id: 'b', at: T, head: 21 }], 'CONFIRMED'],
    ['found straight in a block at depth → CONFIRMED', [inc(30)], 'CONFIRMED'],
    ['failed receipt → FAILED', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, inc(10, 'failed')], 'FAILED'],
    ['unsigned for 7 days → CANCELED', [{ type: 'timer.expired', id: 't', at: T, timer: 'unsigned', generation: 1 }], 'CANCELED'],
    ['merchant cancel → CANCELED', [{ type: 'refund.cancel', id: 'x', at: T }], 'CANCELED'],
    ['reorg while confirming → SUBMITTED', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, inc(11), { type: 'chain.reorged', id: 'r', at: T, tx_hash: 'tx1', head: 12 }], 'SUBMITTED'],
    ['dropped after submission → REQUIRES_SIGNATURE again', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, { type: 'chain.tx.dropped', id: 'd', at: T, tx_hash: 'tx1' }], 'REQUIRES_SIGNATURE'],
    ['cancel after submission is refused (the transfer may still land)', [{ type: 'refund.submitted', id: 's', at: T, tx_hash: 'tx1' }, { type: 'refund.cancel', id: 'x', at: T }], 'SUBMITTED'],
  ];
  it.each(rows)('%s', (_name, events, status) => {
    expect(run(events).status).toBe(status);
  });

  it('CONFIRMED tells the intent once and emits refund.completed; CANCELED releases the hold', () => {
    const ok = run([inc(30), { type: 'chain.block', id: 'b', at: T, head: 40 }]);
    expect(ok.effects.filter((e) => e.type === 'sendTo').map((e) => (e.params as { event: { type: string } }).event.type)).toEqual(['refund.confirmed']);
    expect(ok.effects.filter((e) => e.type === 'emitWebhook').map((e) => (e.params as { type: string }).type)).toEqual(['refund.created', 'refund.completed']);
    const canceled = run([{ type: 'refund.cancel', id: 'x', at: T }]);
    expect(canceled.effects.filter((e) => e.type === 'sendTo').map((e) => (e.params as { event: { type: string } }).event.type)).toEqual(['refund.released']);
  });
});
