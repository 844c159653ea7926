import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../storage/db.ts';
import type { Bus, Subscription } from '../../bus/types.ts';
import type { ActorHost } from '../../engine/actor-host.ts';
import { AnmRpcClient } from '../rpc-client.ts';
import { ChainIndexer, type NetworkName } from './indexer.ts';
import { startChainRouter } from './router.ts';

export interface ChainFollowers {
  indexers: ChainIndexer[];
  stop(): Promise<void>;
}

/** One indexer per network (lease-guarded, so extra processes stand by) plus the signal router. */
export async function startChainFollowers(deps: { db: Db; bus: Bus; host: ActorHost; rpcUrls: Record<NetworkName, string>; onError?: (err: unknown) => void }): Promise<ChainFollowers> {
  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const router: Subscription = await startChainRouter(deps.bus, deps.host);
  const indexers = (Object.keys(deps.rpcUrls) as NetworkName[]).map(
    (network) =>
      new ChainIndexer({ network, rpc: new AnmRpcClient(deps.rpcUrls[network]), db: deps.db, bus: deps.bus, holder, startHeight: 0, ...(deps.onError && { onError: deps.onError }) }),
  );
  for (const i of indexers) i.start();
  return {
    indexers,
    async stop() {
      for (const i of indexers) await i.stop();
      await router.stop();
    },
  };
}
