// Runs ELK layouts off the main thread (runtime/ops/layout.ts), one after another: ELK computes
// synchronously, and the payment intent's chart takes it a second or more, which must not stall
// the gateway's event loop.
import { parentPort } from 'node:worker_threads';
import ELK from 'elkjs/lib/elk.bundled.js';

const elk = new ELK();
parentPort.on('message', ({ id, graph }) => {
  elk.layout(graph).then(
    (laid) => parentPort.postMessage({ id, laid }),
    (err) => parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
  );
});
