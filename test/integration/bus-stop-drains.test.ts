/**
 * A consumer's `stop` resolves only once its handlers in flight have finished, on both buses.
 * A runtime stopping (engine.stop, then waiting for its effects) relies on it: a handler still
 * applying an event after stop returned starts that event's effects behind the caller's back
 * (the scanner's two-runtime test saw a probe sent after both runtimes had stopped).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import type { Bus } from '../../runtime/bus/types.ts';
import { NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';

const K = 5;

async function stopWaitsForHandlers(bus: Bus): Promise<void> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  let finished = 0;
  const sub = await bus.consume({
    durable: 'drain',
    subject: 'actor.>',
    concurrency: 8,
    handler: async (msg) => {
      started++;
      await gate;
      await new Promise((r) => setTimeout(r, 5));
      finished++;
      msg.ack();
    },
  });
  for (let i = 0; i < K; i++) await bus.publish(`actor.order.o${i}`, { i }, { msgId: `m${i}` });
  await waitFor(async () => started === K, 10_000, 'every message delivered');

  let stopped = false;
  const stopping = sub.stop().then(() => (stopped = true));
  await new Promise((r) => setTimeout(r, 50));
  expect(stopped).toBe(false);
  release();
  await stopping;
  expect(finished).toBe(K);
}

describe('Subscription.stop waits for handlers in flight', () => {
  it('in-process bus', async () => {
    const bus = new MemoryBus();
    await stopWaitsForHandlers(bus);
    await bus.close();
  });

  describe.skipIf(!realAvailable)('NATS', () => {
    let bus: NatsBus | undefined;
    afterAll(async () => {
      await bus?.dispose();
      await bus?.close();
    });
    it('JetStream consumer', async () => {
      bus = await NatsBus.connect({ url: NATS_URL, namespace: uniqueName('drain') });
      await stopWaitsForHandlers(bus);
    });
  });
});
