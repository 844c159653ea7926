/**
 * bench:execute's seller in a process of its own (BENCH_SELLER=process), as a
 * seller on the same machine would be: its work is not the marketplace's process's. Answers
 * every paid call at once (seller-answer.ts). Prints one JSON line `{url}` and serves until its
 * standard input closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerPaidCall } from './seller-answer.ts';

const seller = http.createServer(answerPaidCall);
await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(seller.address() as AddressInfo).port}` })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  seller.closeAllConnections();
  seller.close(() => process.exit(0));
});
