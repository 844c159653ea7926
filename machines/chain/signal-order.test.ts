import { describe, expect, it } from 'vitest';
import { depthAhead, depthApplies, inclusionOf, newerStatus, noteDepth, notedHead, noteStatus, staleStatus } from './signal-order.ts';

describe('signal order (ADR 0016)', () => {
  it('drops older statements about the same transaction only', () => {
    const mark = { tx: 'a', at: 10 };
    expect(staleStatus(mark, { tx_hash: 'a', pos: 9 })).toBe(true);
    expect(staleStatus(mark, { tx_hash: 'a', pos: 10 })).toBe(false);
    expect(staleStatus(mark, { tx_hash: 'b', pos: 1 })).toBe(false);
    expect(staleStatus(mark, { tx_hash: 'a' })).toBe(false); // no position: an older indexer
    expect(newerStatus(mark, { tx_hash: 'a', pos: 10 })).toBe(false);
    expect(noteStatus(mark, { tx_hash: 'a', pos: 12 })).toEqual({ tx: 'a', at: 12 });
    expect(noteStatus(mark, { tx_hash: 'a', pos: 3 })).toEqual(mark);
    expect(noteStatus(mark, { tx_hash: 'b', pos: 3 })).toEqual({ tx: 'b', at: 3 });
  });

  it('applies a depth report to its inclusion, keeps one for a later inclusion', () => {
    expect(inclusionOf(null)).toBeNull();
    expect(inclusionOf({ block_height: 5 })).toBe('unknown');
    expect(depthApplies(4, { head: 20, pos: 9, inclusion: 4 })).toBe(true);
    expect(depthApplies(4, { head: 20, pos: 9, inclusion: 7 })).toBe(false);
    expect(depthApplies('unknown', { head: 20, pos: 9, inclusion: 7 })).toBe(true);
    expect(depthAhead(4, null, { head: 20, pos: 9, inclusion: 7 })).toBe(true);
    expect(depthAhead(4, null, { head: 20, pos: 9, inclusion: 3 })).toBe(false);
    const note = noteDepth(null, { head: 20, pos: 9, inclusion: 7 });
    expect(depthAhead(null, note, { head: 19, pos: 8, inclusion: 7 })).toBe(false);
    expect(noteDepth(note, { head: 19, pos: 8, inclusion: 7 })).toEqual(note);
    expect(notedHead(note, 7)).toBe(20);
    expect(notedHead(note, 4)).toBeNull();
  });
});
