/**
 * How the payment intent answers chain signals (mempool sightings, inclusions, depth, reorgs
 * and drops), as transition lists the states of machine.ts share. Positions order the signals
 * (ADR 0016): news older than what the intent has recorded is dropped as stale.
 */
import { and, or } from 'xstate';
import { pi } from './setup.ts';
import { confirmed, confirming, detected, failed, overpaid, ownerPaid, ownerReorged, reorged, scheduleExpiry, underpaid } from './webhooks-and-timers.ts';

/** A transaction not yet known to the intent is matched and classified by its legs. */
export const newTx = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: 'staleSignal' },
      { guard: 'legsShort', target: 'UNDERPAID', actions: ['matchTx', underpaid] },
      { guard: 'legsOver', target: 'OVERPAID', actions: ['matchTx', overpaid] },
      { target: 'PAYMENT_DETECTED', actions: ['matchTx', detected] },
    ],
    'chain.tx.included': [
      { guard: 'staleSignal' },
      { guard: 'receiptFailed', target: 'FAILED', actions: ['matchTx', failed] },
      { guard: 'legsShort', target: 'UNDERPAID', actions: ['matchTx', underpaid] },
      { guard: and(['legsOver', 'depthReached']), target: 'PAID', actions: ['matchTx', overpaid, 'settle', confirmed, ownerPaid] },
      { guard: 'legsOver', target: 'OVERPAID', actions: ['matchTx', overpaid] },
      { guard: 'depthReached', target: 'PAID', actions: ['matchTx', confirming, 'settle', confirmed, ownerPaid] },
      { target: 'CONFIRMING', actions: ['matchTx', confirming] },
    ],
  },
});

/** Pre-settlement: losing the tx (reorg or mempool drop) re-opens the intent, no webhook. */
export const reopenOnLoss = [
  { guard: 'lostTx' as const, target: 'AWAITING_PAYMENT', actions: ['clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] },
  { guard: 'newsOfOurTx' as const, actions: ['noteChain' as const] },
];
/** Any state: a depth report for an inclusion not heard of yet is kept for when it arrives. */
export const keepDepth = { guard: 'depthForLater' as const, actions: ['noteChain' as const] };
/** Positional news of the tx that moves nothing here is still recorded, so older news is dropped. */
export const noteNews = { guard: 'newsOfOurTx' as const, actions: ['noteChain' as const] };

/**
 * The matched tx, known in a block, seen in the mempool at a newer position: its block left
 * the chain. Evaluated as a fresh mempool match in the same step, as if the reorg signal
 * (older, still on its way, and dropped as stale once this is recorded) had come first
 * (ADR 0016). Before settlement the loss sends no webhook; a settled intent's sends
 * `payment.reorged` first, as the reorg would have.
 */
export const reseen = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: and(['backInMempool', 'legsShort']), target: 'UNDERPAID', actions: ['clearTx', 'reopen', 'matchTx', underpaid] },
      { guard: and(['backInMempool', 'legsOver']), target: 'OVERPAID', actions: ['clearTx', 'reopen', 'matchTx', overpaid] },
      { guard: 'backInMempool', target: 'PAYMENT_DETECTED', actions: ['clearTx', 'reopen', 'matchTx', detected] },
      noteNews,
    ],
  },
}).on['chain.tx.seen'];
const settledReseen = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: and(['backInMempool', 'legsShort']), target: 'UNDERPAID', actions: [reorged, ownerReorged, 'clearTx', 'reopen', 'matchTx', underpaid] },
      { guard: and(['backInMempool', 'legsOver']), target: 'OVERPAID', actions: [reorged, ownerReorged, 'clearTx', 'reopen', 'matchTx', overpaid] },
      { guard: 'backInMempool', target: 'PAYMENT_DETECTED', actions: [reorged, ownerReorged, 'clearTx', 'reopen', 'matchTx', detected] },
      noteNews,
    ],
  },
}).on['chain.tx.seen'];

/** CONFIRMING and OVERPAID: the matched tx is deepening towards settlement. */
export const inFlight = pi.createStateConfig({
  on: {
    'chain.tx.seen': reseen,
    'chain.tx.included': [
      { guard: or(['otherTx', 'staleSignal']) },
      { guard: 'receiptFailed', target: 'FAILED', actions: ['matchTx', failed] },
      { guard: 'knownInclusion' },
      { guard: 'depthReached', target: 'PAID', actions: ['matchTx', 'settle', confirmed, ownerPaid] },
      { actions: ['matchTx'] },
    ],
    'chain.block': [
      { guard: 'depthReached', target: 'PAID', actions: ['trackDepth', 'settle', confirmed, ownerPaid] },
      { guard: 'depthAdvances', actions: ['trackDepth'] },
      keepDepth,
    ],
    'chain.reorged': reopenOnLoss,
    'chain.tx.dropped': reopenOnLoss,
  },
});

/** PAID and PARTIALLY_REFUNDED take refunds up to the cap; all settled states can be reorged. */
const settledReorg = [
  { guard: 'lostTx' as const, target: 'AWAITING_PAYMENT', actions: [reorged, ownerReorged, 'clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] },
  noteNews,
];
/**
 * The settled tx reported in another block at a newer position: the block it settled in left
 * the chain. The merchant gets `payment.reorged`, then the inclusion is evaluated as a fresh
 * match, as if the reorg signal (still on its way) had come first (ADR 0016).
 */
// The owner hears of the loss only when the step does not settle again: then nothing changed for it.
const lose = [reorged, 'clearTx', 'reopen'] as const;
const settledMoved = pi.createStateConfig({
  on: {
    'chain.tx.included': [
      { guard: and(['movedBlock', 'receiptFailed']), target: 'FAILED', actions: [...lose, ownerReorged, 'matchTx', failed] },
      { guard: and(['movedBlock', 'legsShort']), target: 'UNDERPAID', actions: [...lose, ownerReorged, 'matchTx', underpaid] },
      { guard: and(['movedBlock', 'legsOver', 'depthReached']), target: 'PAID', actions: [...lose, 'matchTx', overpaid, 'settle', confirmed, ownerPaid] },
      { guard: and(['movedBlock', 'legsOver']), target: 'OVERPAID', actions: [...lose, ownerReorged, 'matchTx', overpaid] },
      { guard: and(['movedBlock', 'depthReached']), target: 'PAID', actions: [...lose, 'matchTx', confirming, 'settle', confirmed, ownerPaid] },
      { guard: 'movedBlock', target: 'CONFIRMING', actions: [...lose, ownerReorged, 'matchTx', confirming] },
    ],
  },
}).on['chain.tx.included'];
export const settledChain = {
  'chain.tx.seen': settledReseen,
  'chain.reorged': settledReorg,
  'chain.tx.dropped': [{ guard: and(['lostTx', 'newsOfOurTx']), target: 'AWAITING_PAYMENT', actions: [reorged, ownerReorged, 'clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] }],
  'chain.tx.included': [{ guard: 'staleSignal' as const }, ...settledMoved, noteNews],
  'chain.block': [{ guard: 'settledDeeper' as const, actions: ['trackDepth' as const] }, keepDepth],
};
