/**
 * Where the legs of an ANM purchase stand on the chain, kept from chain signals in any order
 * (ADR 0016): per leg the newest status statement (`mark`) and the inclusion it states; for
 * the purchase, depth reports that overtook the inclusion they deepen (`notes`, one per
 * inclusion: a report names an inclusion, not a leg, so a note kept per leg could be
 * overwritten by the other leg's). Pure: `applyChain` gives the legs after one signal, the
 * machine's guards compare before and after.
 */
import { depthApplies, newerStatus, noteStatus, staleStatus, type ChainMark, type DepthNote, type KnownInclusion } from '../chain/signal-order.ts';
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
}

export interface ChainLegs {
  /** Confirmations at which a leg counts as settled (DESIGN §3: 12; configurable for tests only). */
  required: number;
  seller: LegOnChain;
  fee: LegOnChain;
  /** Depth reports for inclusions not heard of yet, the newest per inclusion, a few at most. */
  notes: DepthNote[];
}

/** Inclusions a purchase may hear of out of order: its two legs', and their re-inclusions after reorgs. */
const MAX_NOTES = 6;

export const ANM_SETTLEMENT_DEPTH = 12;

export function watchLegs(sellerTx: string, feeTx: string, required: number): ChainLegs {
  const leg = (tx: string): LegOnChain => ({ tx, block_height: null, block_hash: null, inclusion: null, receipt: null, confirmations: 0, mark: null });
  return { required, seller: leg(sellerTx), fee: leg(feeTx), notes: [] };
}

const depthAt = (height: number, head: number): number => Math.max(0, head - height + 1);

const out = (l: LegOnChain): LegOnChain => ({ ...l, block_height: null, block_hash: null, inclusion: null, receipt: null, confirmations: 0 });

/** One leg after a depth report about the inclusion it knows; null when the report is not about it. */
function deepen(l: LegOnChain, e: Extract<PurchaseChainEvent, { type: 'chain.block' }>): LegOnChain | null {
  if (!depthApplies(l.inclusion, e) || l.block_height === null) return null;
  const c = depthAt(l.block_height, e.head);
  // A positional report with a lower head than one applied would take confirmations back.
  return e.pos === undefined || c > l.confirmations ? { ...l, confirmations: c } : l;
}

/** One leg after a status statement about its transfer; `notes` give the depth of a new inclusion. */
function restate(l: LegOnChain, e: Exclude<PurchaseChainEvent, { type: 'chain.block' }>, notes: readonly DepthNote[]): LegOnChain {
  if (e.tx_hash !== l.tx || staleStatus(l.mark, e)) return l;
  // A statement without a position (the node asked directly) cannot be ordered against the
  // positional ones: it counts only while the leg has heard none.
  if (e.pos === undefined && l.mark !== null) return l;
  const mark = noteStatus(l.mark, e);
  switch (e.type) {
    case 'chain.tx.included': {
      // The inclusion it already knows (a redelivery): its depth stays what later reports made it.
      if (l.block_hash === e.block_hash && l.block_height === e.block_height && (e.pos === undefined || l.inclusion === e.pos)) return { ...l, mark };
      const noted = e.pos === undefined ? undefined : notes.find((n) => n.inclusion === e.pos);
      const head = noted ? Math.max(e.head, noted.head) : e.head;
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

/** Keeps a positional report about an inclusion neither leg knows: the newest per inclusion. */
function keepNote(notes: readonly DepthNote[], e: Extract<PurchaseChainEvent, { type: 'chain.block' }>): DepthNote[] {
  if (e.inclusion === undefined || e.pos === undefined) return [...notes];
  const same = notes.find((n) => n.inclusion === e.inclusion);
  if (same && same.at >= e.pos) return [...notes];
  const kept = [...notes.filter((n) => n.inclusion !== e.inclusion), { inclusion: e.inclusion, head: e.head, at: e.pos }];
  // The newest inclusions are the ones still to be heard of.
  return kept.sort((a, b) => a.inclusion - b.inclusion).slice(-MAX_NOTES);
}

export function applyChain(c: ChainLegs, e: PurchaseChainEvent): ChainLegs {
  if (e.type === 'chain.block') {
    const seller = deepen(c.seller, e);
    const fee = deepen(c.fee, e);
    const next = seller || fee ? { ...c, seller: seller ?? c.seller, fee: fee ?? c.fee } : c;
    // A report about an inclusion no leg holds by its position is kept, even when it also
    // deepened a leg known without one (a node look-up's): it may be the other leg's, not heard yet.
    const held = e.inclusion !== undefined && (c.seller.inclusion === e.inclusion || c.fee.inclusion === e.inclusion);
    return held ? next : { ...next, notes: keepNote(c.notes, e) };
  }
  return { ...c, seller: restate(c.seller, e, c.notes), fee: restate(c.fee, e, c.notes) };
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
