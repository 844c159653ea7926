import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';

/**
 * Acks of messages whose handlers finish in one turn of the event loop leave in one socket
 * write: each commit's reply arrives as a callback of its own, and an ack sent at once was a
 * write (and a wake-up of nats-server) per message. Each handler here finishes in a timer
 * callback of its own, as commits do; the acks still all arrive.
 */
const K = 10;

interface Transport {
  send(frame: Uint8Array): void;
}

describe.skipIf(!realAvailable)('NatsBus acks (real NATS)', () => {
  let bus: NatsBus;

  beforeAll(async () => {
    bus = await NatsBus.connect({ url: NATS_URL, namespace: uniqueName('acks') });
  });
  afterAll(async () => {
    await bus?.dispose();
    await bus?.close();
  });

  it('handlers finishing in one turn ack in one write', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    let acked = 0;
    const sub = await bus.consume({
      durable: 'acks',
      subject: 'actor.>',
      concurrency: 32,
      handler: async (msg) => {
        started++;
        await gate;
        await new Promise((r) => setTimeout(r, 0));
        msg.ack();
        acked++;
      },
    });
    for (let i = 0; i < K; i++) await bus.publish(`actor.order.o${i}`, { i }, { msgId: `m${i}` });
    await waitFor(async () => started === K, 10_000, 'every message delivered');

    // The connection's transport: every socket write the client makes.
    const transport = (bus as unknown as { nc: { protocol: { transport: Transport } } }).nc.protocol.transport;
    const send = transport.send.bind(transport);
    let writes = 0;
    transport.send = (frame) => {
      writes++;
      send(frame);
    };
    release();
    await waitFor(async () => acked === K, 10_000, 'every handler done');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
    transport.send = send;
    expect(writes).toBeLessThanOrEqual(2);

    const jsm = await (bus as unknown as { nc: { jetstreamManager(): Promise<{ consumers: { info(s: string, c: string): Promise<{ num_ack_pending: number }> } }> } }).nc.jetstreamManager();
    const stream = (bus as unknown as { streamFor(s: string): string }).streamFor('actor.order.o0');
    await waitFor(async () => (await jsm.consumers.info(stream, 'acks')).num_ack_pending === 0, 10_000, 'every ack received');
    await sub.stop();
  });
});
