import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../storage/db.ts';
import type { Bus } from '../../bus/types.ts';
import { AnmRpcClient } from '../rpc-client.ts';
import { ChainIndexer, type NetworkName } from './indexer.ts';

export interface ChainIndexers {
  indexers: ChainIndexer[];
  stop(): Promise<void>;
}

/**
 * One indexer per network, each behind a lease (one active per network, other processes
 * with the indexer role stand by). The signals they publish are applied to actors by the
 * chain router (`router.ts`), which runs in the runtime processes.
 */
export function startChainIndexers(deps: {
  db: Db;
  bus: Bus;
  rpcUrls: Record<NetworkName, string>;
  onError?: (err: unknown) => void;
  onReconciled?: (network: NetworkName, intentIds: string[]) => void;
}): ChainIndexers {
  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const indexers = (Object.keys(deps.rpcUrls) as NetworkName[]).map(
    (network) =>
      new ChainIndexer({
        network,
        rpc: new AnmRpcClient(deps.rpcUrls[network]),
        db: deps.db,
        bus: deps.bus,
        holder,
        startHeight: 0,
        ...(deps.onError && { onError: deps.onError }),
        ...(deps.onReconciled && { onReconciled: (ids: string[]) => deps.onReconciled!(network, ids) }),
      }),
  );
  for (const i of indexers) i.start();
  return {
    indexers,
    async stop() {
      for (const i of indexers) await i.stop();
    },
  };
}
