/**
 * Chain signals in any order (DESIGN §2 "Signals in any order", ADR 0016). Nothing orders the
 * indexer's messages across subjects, and several consumers reorder even one subject, so each
 * chain signal carries the indexer's position `pos` (a number that grows with every block the
 * indexer applies or reverts and with every mempool or depth report, never issued twice) and
 * states what is true at that position. An actor keeps, per transaction, the highest position
 * of a statement about where the transaction stands and drops any older one; and it keeps the
 * newest depth report it could not use yet, because a depth report may overtake the inclusion
 * it deepens. Signals without `pos` come from indexers older than positions and keep the
 * rules they had.
 *
 * Pure functions over plain JSON: payment intents, refunds and any later chain-watching actor
 * store a `ChainMark` and a `DepthNote` in their context and call these from their guards.
 */

/** Where the actor's knowledge of one transaction stands. */
export interface ChainMark {
  tx: string;
  /** Highest position of a status statement about `tx` (seen, included, reorged, dropped). */
  at: number;
}

/** A depth report: the inclusion it deepens (that inclusion's position), the head, and its own position. */
export interface DepthNote {
  inclusion: number;
  head: number;
  at: number;
}

/** A statement about where a transaction stands. */
export interface StatusSignal {
  tx_hash: string;
  pos?: number | undefined;
}

/** A new head for the actor's included transaction. */
export interface DepthSignal {
  head: number;
  pos?: number | undefined;
  /** Position of the inclusion this report deepens (absent from older indexers). */
  inclusion?: number | undefined;
}

/**
 * What the actor knows of its transaction's inclusion: its position, `'unknown'` for one
 * recorded before positions existed (any depth report applies to it), null if not included.
 */
export type KnownInclusion = number | 'unknown' | null;

/** An older statement about the same transaction than one already applied: drop it. */
export function staleStatus(mark: ChainMark | null | undefined, s: StatusSignal): boolean {
  return s.pos !== undefined && mark != null && mark.tx === s.tx_hash && s.pos < mark.at;
}

/** A positional statement newer than everything applied about its transaction. */
export function newerStatus(mark: ChainMark | null | undefined, s: StatusSignal): boolean {
  return s.pos !== undefined && (mark == null || mark.tx !== s.tx_hash || s.pos > mark.at);
}

/** The mark once `s` is applied. A statement about another transaction starts a new mark. */
export function noteStatus(mark: ChainMark | null | undefined, s: StatusSignal): ChainMark | null {
  if (s.pos === undefined) return mark ?? null;
  if (mark && mark.tx === s.tx_hash && mark.at >= s.pos) return mark;
  return { tx: s.tx_hash, at: s.pos };
}

/** Position of an inclusion a status signal states, for `KnownInclusion`. */
export function inclusionOf(tx: { block_height: number | null; pos?: number | null | undefined } | null): KnownInclusion {
  if (tx === null || tx.block_height === null) return null;
  return tx.pos ?? 'unknown';
}

/** The depth report is about the inclusion the actor knows. */
export function depthApplies(known: KnownInclusion, s: DepthSignal): boolean {
  if (known === null) return false;
  return s.inclusion === undefined || known === 'unknown' || s.inclusion === known;
}

/**
 * The depth report is about an inclusion the actor has not heard of yet (newer than the one
 * it knows, or any while it knows none): keep it for when that inclusion arrives.
 */
export function depthAhead(known: KnownInclusion, note: DepthNote | null | undefined, s: DepthSignal): boolean {
  if (s.inclusion === undefined || s.pos === undefined || known === 'unknown') return false;
  if (known !== null && s.inclusion <= known) return false;
  return note == null || s.pos > note.at;
}

/** The note once a depth report is kept: the newest wins. */
export function noteDepth(note: DepthNote | null | undefined, s: DepthSignal): DepthNote | null {
  if (s.inclusion === undefined || s.pos === undefined) return note ?? null;
  if (note && note.at >= s.pos) return note;
  return { inclusion: s.inclusion, head: s.head, at: s.pos };
}

/** The head a kept depth report gives the inclusion at `inclusion`, or null. */
export function notedHead(note: DepthNote | null | undefined, inclusion: number | undefined): number | null {
  return note != null && inclusion !== undefined && note.inclusion === inclusion ? note.head : null;
}
