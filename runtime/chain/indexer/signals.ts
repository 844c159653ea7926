/**
 * Wire shapes of the chain signals the indexer publishes on `chain.<network>.*` and their
 * expansion into actor events by the router. Signals that concern many actors at once are
 * one message each (not one per actor): a JetStream publish and its ack cost far more than
 * the few hundred bytes an extra actor adds to a message.
 */
import type { ActorEnvelope } from '../../engine/actor-types.ts';

type Target = ActorEnvelope['target'];

/** `chain.<network>.block`: a new head, for the actors whose transaction is still deepening. */
export interface BlockSignal {
  head: number;
  hash: string;
  at: number;
  /** The indexer's position (ADR 0016); absent from older indexers. */
  pos?: number;
  /** `inc`: the position at which the block holding the target's transaction was applied. */
  targets: Array<{ kind: string; id: string; inc?: number }>;
}

/** One matched transaction of an `IncludedSignal`, naming the actor it pays. */
export interface IncludedTx {
  kind: string;
  id: string;
  tx_hash: string;
  from: string;
  merchant_leg: string;
  fee_leg: string;
  receipt: 'success' | 'failed';
}

/** `chain.<network>.included`: the matched transactions of one block (or of one chunk of it). */
export interface IncludedSignal {
  block_height: number;
  block_hash: string;
  head: number;
  at: number;
  /** The position at which the indexer applied the block (ADR 0016); absent from older indexers. */
  pos?: number;
  txs: IncludedTx[];
}

/**
 * Matched transactions per `included` message: keeps a message of the largest devnet block
 * (5,000 transactions) far below NATS's default 1 MB payload limit.
 */
export const INCLUDED_CHUNK = 1_000;

/**
 * Actors per `block` message: ~45 bytes each on the wire, so ~225 kB. Measured: 23,000 in one
 * message fit under the 1 MB limit and 43,000 did not (the indexer benchmark with 40 blocks).
 */
export const BLOCK_SIGNAL_CHUNK = 5_000;

/** Bus message id of one chunk of a depth signal; the window's size tells a grown window from a retry. */
export const blockMsgId = (network: string, s: BlockSignal, windowSize: number, chunk: number): string =>
  `blk:${network}:${s.head}:${s.hash}:${windowSize}:${chunk}${posPart(s.pos)}`;

/** Positions in ids: the same block applied again (after a restart or a reorg back) is news, not a duplicate. */
const posPart = (pos: number | undefined): string => (pos === undefined ? '' : `@${pos}`);

export const includedSubject = (network: string): string => `chain.${network}.included`;

/**
 * Bus message id of one chunk: the block's hash is in it, so after a reorg the new block's
 * signal is never taken for a duplicate of the old one; the count keeps a re-scan that matched
 * more (an actor created meanwhile) from being dropped as a duplicate of a smaller message.
 */
export const includedMsgId = (network: string, s: IncludedSignal, chunk: number): string =>
  `inc:${network}:${s.block_height}:${s.block_hash}:${chunk}:${s.txs.length}${posPart(s.pos)}`;

/** The actor events a chain signal stands for; per-actor signals are one envelope already. */
export function signalEnvelopes(subject: string, data: unknown): ActorEnvelope[] {
  // `chain.<network>.<signal>`: compared whole, since `tx.included` also ends in `.included`.
  const signal = subject.split('.').slice(2).join('.');
  if (signal === 'block') {
    const b = data as BlockSignal;
    const id = `blk:${b.head}:${b.hash}${posPart(b.pos)}`;
    if (b.pos === undefined) {
      const event = { type: 'chain.block', id, at: b.at, head: b.head };
      return b.targets.map((target) => ({ target, event }));
    }
    // A report is about one inclusion: an actor watching two transactions (a purchase's legs)
    // is named twice, and one event id for both would drop the second as a duplicate.
    return b.targets.map((t) => ({
      target: { kind: t.kind, id: t.id },
      event: { type: 'chain.block', id: t.inc === undefined ? id : `${id}#${t.inc}`, at: b.at, head: b.head, pos: b.pos, ...(t.inc !== undefined && { inclusion: t.inc }) },
    }));
  }
  if (signal === 'included') {
    const s = data as IncludedSignal;
    return s.txs.map((t) => ({
      target: { kind: t.kind, id: t.id } satisfies Target,
      event: {
        type: 'chain.tx.included',
        // The same id as when each transaction was its own message: actors dedupe across both.
        id: `inc:${t.tx_hash}:${s.block_hash}${posPart(s.pos)}`,
        at: s.at,
        tx_hash: t.tx_hash,
        from: t.from,
        merchant_leg: t.merchant_leg,
        fee_leg: t.fee_leg,
        block_height: s.block_height,
        block_hash: s.block_hash,
        receipt: t.receipt,
        head: s.head,
        ...(s.pos !== undefined && { pos: s.pos }),
      },
    }));
  }
  return [data as ActorEnvelope];
}
