/**
 * The ANM lane's chain for marketplace tests: an in-process devnet (mines on request), the
 * indexer following its live network (`native:1`, chain id 1) and the chain router that
 * applies the indexer's signals to purchase actors, over the harness's backend.
 */
import { randomBytes } from 'node:crypto';
import type { Subscription } from '../../runtime/bus/types.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import { startChainRouter } from '../../runtime/chain/indexer/router.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { Backend } from '../helpers/backends.ts';

export interface AnmChain {
  devnet: DevnetServer;
  rpc: AnmRpcClient;
  indexer: ChainIndexer;
  stop(): Promise<void>;
}

export async function startAnmChain(b: Backend, host: ActorHost): Promise<AnmChain> {
  const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  const rpc = new AnmRpcClient(`${devnet.url}/live`);
  const router: Subscription = await startChainRouter(b.bus, host);
  const indexer = new ChainIndexer({ network: 'live', rpc, db: b.db, bus: b.bus, holder: `market-${randomBytes(4).toString('hex')}`, pollMs: 30, startHeight: 0 });
  indexer.start();
  return {
    devnet,
    rpc,
    indexer,
    async stop() {
      await indexer.stop();
      await router.stop();
      await devnet.close();
    },
  };
}
