import { describe, expect, it } from 'vitest';
import type { Bus } from '../../bus/types.ts';
import { publishDepth, publishIncluded } from './publish.ts';
import { BLOCK_SIGNAL_CHUNK, type BlockSignal, type IncludedSignal } from './signals.ts';

// NATS's default max_payload: a message above it is refused by the client.
const NATS_MAX_PAYLOAD = 1024 * 1024;

function recordingBus(): { bus: Bus; sent: Array<{ subject: string; data: unknown; msgId: string | undefined; bytes: number }> } {
  const sent: Array<{ subject: string; data: unknown; msgId: string | undefined; bytes: number }> = [];
  const bus = {
    kind: 'memory',
    publish: async (subject: string, data: unknown, opts?: { msgId?: string }) => {
      sent.push({ subject, data, msgId: opts?.msgId, bytes: Buffer.byteLength(JSON.stringify(data)) });
    },
  } as unknown as Bus;
  return { bus, sent };
}

const targets = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'payment_intent', id: `pay_${String(i).padStart(24, 'a')}` }));

describe('indexer signal publishing', () => {
  it('a settlement window of 43,000 actors goes out in messages under the NATS payload limit, each actor once, in order', async () => {
    const { bus, sent } = recordingBus();
    const all = targets(43_000);
    const r = await publishDepth(bus, 'test', { head: 60, hash: 'h60', at: 1 }, all);
    expect(r.messages).toBe(Math.ceil(43_000 / BLOCK_SIGNAL_CHUNK));
    expect(sent).toHaveLength(r.messages);
    for (const m of sent) {
      expect(m.subject).toBe('chain.test.block');
      expect(m.bytes).toBeLessThan(NATS_MAX_PAYLOAD / 2);
    }
    expect(sent.flatMap((m) => (m.data as BlockSignal).targets)).toEqual(all);
    // One signal in one message would not fit: what the chunking is for.
    expect(Buffer.byteLength(JSON.stringify({ head: 60, hash: 'h60', at: 1, targets: all }))).toBeGreaterThan(NATS_MAX_PAYLOAD);
  });

  it('chunk ids are distinct within a signal and equal when the same window is published again', async () => {
    const a = recordingBus();
    const b = recordingBus();
    const base = { head: 9, hash: 'h9', at: 5 };
    await publishDepth(a.bus, 'live', base, targets(5), 2);
    await publishDepth(b.bus, 'live', { ...base, at: 6 }, targets(5), 2);
    const ids = a.sent.map((m) => m.msgId);
    expect(ids).toEqual(['blk:live:9:h9:5:0', 'blk:live:9:h9:5:1', 'blk:live:9:h9:5:2']);
    expect(b.sent.map((m) => m.msgId)).toEqual(ids);
    // A window that grew between two attempts is not taken for a duplicate of the smaller one.
    const c = recordingBus();
    await publishDepth(c.bus, 'live', base, targets(6), 2);
    expect(c.sent.map((m) => m.msgId)).not.toContain(ids[0]);
  });

  it('an empty window sends nothing; a block with 2,500 matched transactions goes out in 3 included messages', async () => {
    const { bus, sent } = recordingBus();
    expect((await publishDepth(bus, 'test', { head: 1, hash: 'h', at: 0 }, [])).messages).toBe(0);
    const txs = Array.from({ length: 2_500 }, (_, i) => ({ kind: 'payment_intent', id: `pay_${i}`, tx_hash: `t${i}`, from: 'tanm1x', merchant_leg: '98', fee_leg: '2', receipt: 'success' as const }));
    const r = await publishIncluded(bus, 'test', { block_height: 7, block_hash: 'b7', head: 7, at: 0 }, txs);
    expect(r.messages).toBe(3);
    expect(sent.flatMap((m) => (m.data as IncludedSignal).txs)).toEqual(txs);
    expect(new Set(sent.map((m) => m.msgId)).size).toBe(3);
  });
});
