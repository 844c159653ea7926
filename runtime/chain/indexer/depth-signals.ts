/**
 * Depth signals: new depth for the actors whose transaction had not reached its required
 * depth at the head depth was last published for (`depth_head`, one number per network, moved
 * in the same transaction that publishes the signal: a failed publish leaves it for the next
 * tick, a crash after it re-publishes under the same message id).
 */
import type { Db } from '../../../storage/db.ts';
import type { Bus } from '../../bus/types.ts';
import type { AnmRpcClient } from '../rpc-client.ts';
import { publishDepth } from './publish.ts';
import { inSettlementWindow, lockDepthHead, setDepthHead } from './store-depth.ts';

export interface DepthSignalDeps {
  db: Db;
  bus: Bus;
  rpc: Pick<AnmRpcClient, 'getBlockByNumber'>;
  network: string;
  /** Actors per message (default `BLOCK_SIGNAL_CHUNK`). */
  chunk?: number;
  /** `n` fresh positions (ADR 0016), the first returned. */
  reserve(n: number): Promise<number>;
  now(): number;
}

/** Publishes the depth of `tip` to the settlement window; the actor events and messages it took. */
export async function signalDepth(d: DepthSignalDeps, tip: { height: number; hash: string }): Promise<{ signals: number; messages: number }> {
  const head = tip.height;
  const out = { signals: 0, messages: 0 };
  if (head < 0) return out;
  // Reserved outside the transaction (PGlite has one connection), before the window is read.
  const pos = await d.reserve(1);
  await d.db.tx(async (q) => {
    const last = await lockDepthHead(q, d.network);
    if (last === null || last >= head) return;
    const rows = await inSettlementWindow(q, d.network, last, head);
    if (rows.length > 0) {
      const hash = tip.hash || ((await d.rpc.getBlockByNumber(head, false))?.hash ?? '');
      // Block signals name every actor inside the settlement window; the router fans them out.
      const targets = rows.map((r) => ({ kind: r.kind, id: r.actor_id, ...(r.inclusion_pos !== null && { inc: Number(r.inclusion_pos) }) }));
      const { messages } = await publishDepth(d.bus, d.network, { head, hash, at: d.now(), pos }, targets, d.chunk);
      out.signals = rows.length;
      out.messages = messages;
    }
    await setDepthHead(q, d.network, head);
  });
  return out;
}
