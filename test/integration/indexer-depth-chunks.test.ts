import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlockSignal } from '../../runtime/chain/indexer/signals.ts';
import type { Subscription } from '../../runtime/bus/types.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { ChainHarness } from '../helpers/chain-harness.ts';

/**
 * Depth signals cut into chunks (runtime/chain/indexer/publish.ts): a settlement window larger
 * than one message still reaches every actor in it, through the real bus and router.
 */
describe.each(backendFactories)('depth signals in chunks on %s', (_name, open) => {
  let b: Backend;
  let h: ChainHarness;
  let watch: Subscription;
  const seen: BlockSignal[] = [];
  beforeAll(async () => {
    b = await open();
    h = await ChainHarness.start(b, undefined, { blockSignalChunk: 2 });
    // A second durable consumer sees every block signal the router also gets.
    watch = await b.bus.consume({
      durable: 'depth-chunk-observer',
      subject: 'chain.test.block',
      handler: async (msg) => {
        seen.push(msg.data as BlockSignal);
        msg.ack();
      },
    });
  });
  afterAll(async () => {
    await watch.stop();
    await h.stop();
    await b.close();
  });

  it('DESIGN §3: five actors in the window, two per message: every one reaches PAID at its required depth', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await h.createIntent({ required: 3 }));
    for (const id of ids) await h.pay(id, await h.customer());
    for (const id of ids) await h.waitState(id, 'PAYMENT_DETECTED');
    await h.mine(1);
    await h.settle();
    for (const id of ids) expect(await h.state(id)).toBe('CONFIRMING');
    const included = await h.rpc.blockNumber();
    await h.mine(2);
    await h.settle();
    for (const id of ids) expect((await h.waitState(id, 'PAID')).confirmations).toBe(3);
    // Some head named all five actors, in three messages of at most two.
    const byHead = new Map<number, BlockSignal[]>();
    for (const s of seen) byHead.set(s.head, [...(byHead.get(s.head) ?? []), s]);
    const full = [...byHead.entries()].filter(([head, msgs]) => head > included && msgs.flatMap((m) => m.targets).filter((t) => ids.includes(t.id)).length === 5);
    expect(full.length).toBeGreaterThan(0);
    for (const [, msgs] of full) {
      expect(msgs).toHaveLength(3);
      for (const m of msgs) expect(m.targets.length).toBeLessThanOrEqual(2);
    }
  });
});
