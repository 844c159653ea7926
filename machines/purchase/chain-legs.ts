/**
 * Where the legs of an ANM purchase stand on the chain, kept from chain signals in any order
 * (ADR 0016): per leg the newest status statement (`mark`), the inclusion it states, and a
 * depth report that overtook its inclusion (`depth`). Pure: `applyChain` gives the legs after
 * one signal, the machine's guards compare before and after.
 */
import {
  depthAhead,
  depthApplies,
  newerStatus,
  noteDepth,
  noteStatus,
  notedHead,
  staleStatus,
  type ChainMark,
  type DepthNote,
  type KnownInclusion,
} from '../chain/signal-order.ts';
import type { PurchaseChainEvent } from './chain-events.ts';

export interface LegOnChain {
  /** The signed transfer's hash, known from verification. */
  tx: string;
  block_height: number | null;
  block_hash: string | null;
  inclusion: KnownInclusion;
  receipt: 'success' | 'failed' | null;
  confirmations: number;
  mark: ChainMark | null;
  depth: DepthNote | null;
}

export interface ChainLegs {
  /** Confirmations at which a leg counts as settled (DESIGN §3: 12; configurable for tests only). */
  required: number;
  seller: LegOnChain;
  fee: LegOnChain;
}

export const ANM_SETTLEMENT_DEPTH = 12;

export function watchLegs(sellerTx: string, feeTx: string, required: number): ChainLegs {
  const leg = (tx: string): LegOnChain => ({ tx, block_height: null, block_hash: null, inclusion: null, receipt: null, confirmations: 0, mark: null, depth: null });
  return { required, seller: leg(sellerTx), fee: leg(feeTx) };
}

const depthAt = (height: number, head: number): number => Math.max(0, head - height + 1);

const out = (l: LegOnChain): LegOnChain => ({ ...l, block_height: null, block_hash: null, inclusion: null, receipt: null, confirmations: 0 });

/** One leg after one signal about it (or about a new head). */
function applyLeg(l: LegOnChain, e: PurchaseChainEvent): LegOnChain {
  if (e.type === 'chain.block') {
    if (depthApplies(l.inclusion, e) && l.block_height !== null) {
      const c = depthAt(l.block_height, e.head);
      // A positional report with a lower head than one applied would take confirmations back.
      return e.pos === undefined || c > l.confirmations ? { ...l, confirmations: c } : l;
    }
    return depthAhead(l.inclusion, l.depth, e) ? { ...l, depth: noteDepth(l.depth, e) } : l;
  }
  if (e.tx_hash !== l.tx || staleStatus(l.mark, e)) return l;
  const mark = noteStatus(l.mark, e);
  switch (e.type) {
    case 'chain.tx.included': {
      const noted = notedHead(l.depth, e.pos);
      const head = noted === null ? e.head : Math.max(e.head, noted);
      return { ...l, mark, block_height: e.block_height, block_hash: e.block_hash, inclusion: e.pos ?? 'unknown', receipt: e.receipt, confirmations: depthAt(e.block_height, head) };
    }
    case 'chain.tx.seen':
      // Seen in the mempool at a newer position than its inclusion: its block left the chain.
      return l.block_height !== null && newerStatus(l.mark, e) ? { ...out(l), mark } : { ...l, mark };
    case 'chain.reorged':
      return e.block_hash === undefined || e.block_hash === l.block_hash ? { ...out(l), mark } : { ...l, mark };
    case 'chain.tx.dropped':
      return { ...out(l), mark };
  }
}

export function applyChain(c: ChainLegs, e: PurchaseChainEvent): ChainLegs {
  return { ...c, seller: applyLeg(c.seller, e), fee: applyLeg(c.fee, e) };
}

/** Included with a successful receipt and `required` deep: the transfer counts as settled. */
export function legSettled(c: ChainLegs, leg: 'seller' | 'fee'): boolean {
  const l = c[leg];
  return l.block_height !== null && l.receipt === 'success' && l.confirmations >= c.required;
}

/** Included with a failed receipt (the chain took the nonce, the payee got nothing). */
export function legFailedOnChain(c: ChainLegs, leg: 'seller' | 'fee'): boolean {
  return c[leg].block_height !== null && c[leg].receipt === 'failed';
}
