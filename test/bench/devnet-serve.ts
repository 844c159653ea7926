/**
 * An empty devnet (mines only on request) in a process of its own, as the node a marketplace
 * talks to would be: its work is not counted as the service's. Prints one JSON line `{url}`
 * and serves until its standard input closes.
 */
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';

const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
process.stdout.write(`${JSON.stringify({ url: devnet.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void devnet.close().then(() => process.exit(0)));
