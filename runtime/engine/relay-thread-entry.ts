/**
 * The relay thread (relay-thread.ts starts it): the same `OutboxRelay` as the main thread's,
 * over a pool and a NATS connection of its own. A connection that cannot be opened throws out
 * of this module: the thread ends, and the main thread relays in its place.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openPg } from '../../storage/pg-adapter.ts';
import { NatsBus } from '../bus/nats-bus.ts';
import { OutboxRelay } from './outbox-relay.ts';
import type { FromThread, RelayThreadData, ToThread } from './relay-thread.ts';

const port = parentPort!;
const data = workerData as RelayThreadData;
const post = (m: FromThread): void => port.postMessage(m);

const db = await openPg({ connectionString: data.databaseUrl, max: data.poolSize, ...(data.schema && { schema: data.schema }) });
const bus = await NatsBus.connect({ url: data.natsUrl, namespace: data.namespace });
// The figures go to the main thread: its registry is the one `/metrics` serves.
const relay = new OutboxRelay(db, bus, { ...data.relay, onBatch: (rows, age) => post({ type: 'batch', rows, age }) });

port.on('message', (m: ToThread) => {
  if (m === 'nudge') relay.nudge();
  else if (m.type === 'drain') {
    relay.drainOnce().then(
      (count) => post({ type: 'drained', id: m.id, count }),
      (err: unknown) => post({ type: 'drained', id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
  } else void stop();
});

async function stop(): Promise<void> {
  await relay.stop();
  // The main thread ends the thread on this answer whatever happened: a close that failed has nothing left to keep.
  await Promise.allSettled([bus.close(), db.close()]);
  post({ type: 'stopped' });
}

relay.start();
post({ type: 'ready' });
