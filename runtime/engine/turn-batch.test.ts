import { describe, expect, it } from 'vitest';
import { SEND_ALONE, TurnBatcher } from './turn-batch.ts';

/** A statement the test answers by hand. */
interface Sent {
  items: number[];
  answer(): void;
  fail(): void;
}

function batcher(opts: { inFlight?: number; refuse?: number } = {}) {
  const sent: Sent[] = [];
  const b = new TurnBatcher<number, string>({
    max: 64,
    ...(opts.inFlight !== undefined ? { inFlight: opts.inFlight } : {}),
    groupOf: () => 'g',
    distinct: (n) => String(n),
    alone: (n) => new Promise((resolve, reject) => sent.push({ items: [n], answer: () => resolve(`alone ${n}`), fail: () => reject(new Error('down')) })),
    together: (items) =>
      new Promise((resolve, reject) =>
        sent.push({ items, answer: () => resolve(items.map((n) => (n === opts.refuse ? SEND_ALONE : `together ${n}`))), fail: () => reject(new Error('down')) }),
      ),
  });
  return { b, sent };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('TurnBatcher', () => {
  it('sends a turn\'s writes as one statement, and the next turn\'s at once when no bound is set', async () => {
    const { b, sent } = batcher();
    const first = [b.write(1), b.write(2)];
    await turn();
    const second = [b.write(3), b.write(4)];
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1, 2], [3, 4]]);
    sent.forEach((s) => s.answer());
    expect(await Promise.all([...first, ...second])).toEqual(['together 1', 'together 2', 'together 3', 'together 4']);
  });

  it('holds what arrives while `inFlight` statements are out, then sends it together when one answers', async () => {
    const { b, sent } = batcher({ inFlight: 1 });
    const first = b.write(1);
    await turn();
    const waiting = [b.write(2), b.write(3)];
    await turn();
    const more = b.write(4);
    await turn();
    // One statement out: 2, 3 and 4 wait, over two turns.
    expect(sent.map((s) => s.items)).toEqual([[1]]);
    sent[0]!.answer();
    expect(await first).toBe('alone 1');
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1], [2, 3, 4]]);
    sent[1]!.answer();
    expect(await Promise.all([...waiting, more])).toEqual(['together 2', 'together 3', 'together 4']);
  });

  it('gives the place back when a statement fails, and each of its writes is then sent alone', async () => {
    const { b, sent } = batcher({ inFlight: 1 });
    const first = [b.write(1), b.write(2)];
    await turn();
    const later = b.write(3);
    await turn();
    sent[0]!.fail();
    await turn();
    await turn();
    // The failed batch's writes alone, and the waiting write's statement, all sent.
    expect(sent.map((s) => s.items)).toEqual([[1, 2], [1], [2], [3]]);
    sent.slice(1).forEach((s) => s.answer());
    expect(await Promise.all([...first, later])).toEqual(['alone 1', 'alone 2', 'alone 3']);
  });

  it('frees the place when the statement answers, before a write it left out is sent alone', async () => {
    const { b, sent } = batcher({ inFlight: 1, refuse: 2 });
    const first = [b.write(1), b.write(2)];
    await turn();
    const later = [b.write(3), b.write(4)];
    await turn();
    sent[0]!.answer();
    await turn();
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1, 2], [2], [3, 4]]);
    sent.slice(1).forEach((s) => s.answer());
    expect(await Promise.all([...first, ...later])).toEqual(['together 1', 'alone 2', 'together 3', 'together 4']);
  });

  it('gives the place back when a write sent alone fails', async () => {
    const { b, sent } = batcher({ inFlight: 1 });
    const first = b.write(1);
    await turn();
    const later = b.write(2);
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1]]);
    sent[0]!.fail();
    await expect(first).rejects.toThrow('down');
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1], [2]]);
    sent[1]!.answer();
    expect(await later).toBe('alone 2');
  });

  it('with two in flight, sends two statements and holds the third', async () => {
    const { b, sent } = batcher({ inFlight: 2 });
    const writes = [b.write(1), b.write(2)];
    await turn();
    writes.push(b.write(3), b.write(4));
    await turn();
    writes.push(b.write(5), b.write(6));
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1, 2], [3, 4]]);
    sent[0]!.answer();
    await turn();
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1, 2], [3, 4], [5, 6]]);
    sent.slice(1).forEach((s) => s.answer());
    expect(await Promise.all(writes)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `together ${n}`));
  });

  it('writes alone an actor already held in the group, and batches it again once the held ones are sent', async () => {
    const { b, sent } = batcher({ inFlight: 1 });
    void b.write(1);
    await turn();
    void b.write(2);
    await turn();
    // 2 is held across a flush; a second write of 2 goes alone at once.
    void b.write(2);
    expect(sent.map((s) => s.items)).toEqual([[1], [2]]);
    sent[0]!.answer();
    await turn();
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1], [2], [2]]);
    // The held 2 has been sent: a new write of 2 joins the group again.
    void b.write(2);
    void b.write(3);
    sent[2]!.answer();
    await turn();
    await turn();
    expect(sent.map((s) => s.items)).toEqual([[1], [2], [2], [2, 3]]);
  });

  it('refuses a bound below one', () => {
    expect(() => batcher({ inFlight: 0 })).toThrow(RangeError);
  });
});
