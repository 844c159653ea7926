/**
 * The devnet node of the indexer benchmark in a process of its own, as a real node would be:
 * serving blocks does not share the indexer's thread. Loads the signed corpus (argv: blocks,
 * per block), mines it plus 12 empty blocks, prints one JSON line `{url, head, merchant,
 * treasury}` and serves until its standard input closes.
 */
import { makeRpcHandler } from '../../runtime/chain/devnet/rpc.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { loadCorpus } from './devnet-corpus.ts';

const [blocks, perBlock] = process.argv.slice(2).map(Number);
const corpus = await loadCorpus(blocks!, perBlock!);
const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
const node = devnet.nodes.test;
for (const s of corpus.senders) node.faucet(s.address, 10n ** 15n);
for (const txs of corpus.blocks) {
  for (const hex of txs) node.sendRawTransaction(hex);
  node.mine(1);
}
node.mine(12);
// The signed corpus (~11 MB of hex per block) is no longer needed while blocks are served;
// collected now, not in the middle of the timed run.
corpus.blocks.length = 0;
// Each block is asked for once before the run, as a block explorer or a second indexer would
// have: the JSON encoding a node does once per block (ours caches it) is the node's work on
// the node's machine, not part of the indexer's figure on this one.
const rpc = makeRpcHandler(node);
for (let h = 0; h <= node.height; h++) rpc({ jsonrpc: '2.0', id: h, method: 'anm_getBlockByNumber', params: [h, true] });
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(`${JSON.stringify({ url: devnet.url, head: node.height, merchant: corpus.merchant, treasury: corpus.treasury })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void devnet.close().then(() => process.exit(0)));
