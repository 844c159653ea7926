/** Worker thread of devnet-corpus.ts: signs the block it is asked for and posts its transactions back. */
import { parentPort } from 'node:worker_threads';
import { signBlock } from './devnet-corpus.ts';

parentPort!.on('message', ({ b, perBlock }: { b: number; perBlock: number }) => {
  parentPort!.postMessage(signBlock(b, perBlock));
});
