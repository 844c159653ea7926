/**
 * A node client's reads asked in the same event-loop turn, sent as one JSON-RPC 2.0 batch (the
 * array form, which the devnet and any JSON-RPC 2.0 node answer; ADR 0107). The marketplace
 * checks each ANM leg against the node (the transfer unknown, its nonce free, the payer's
 * balance): the reads of one check, and under load those of every request read in one poll
 * phase, share one HTTP round trip, as the engine's writes share one statement (turn-batch.ts).
 * A batch of one is the plain request. Every batch goes out at the end of its turn, with no
 * bound on those in flight, so no read waits for another batch and the client's timeout is each
 * read's own. Only reads are batched: a read asked twice does no harm, so when the node refuses
 * the batch form (one JSON-RPC error object for the whole array) each call is asked alone.
 */
import { TurnBatcher } from '../engine/turn-batch.ts';

/** The methods a batching client sends together: reads whose answer no other call changes. */
export const BATCHED_READS: ReadonlySet<string> = new Set(['anm_getTransactionByHash', 'anm_getTransactionReceipt', 'anm_getNonce', 'anm_getBalance', 'anm_blockNumber']);

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** One call's JSON-RPC response object as parsed, or what fails the call. */
export type RpcReply = { status: number; body: unknown } | { failed: Error };

/** Calls per batch at most: a leg check asks two or four, so 64 is many requests' worth. */
const MAX_PER_BATCH = 64;

/**
 * The node's answer to a batch, matched to its calls by id (a node may answer in any order);
 * null when the node refused the batch form, so that each call is asked alone. An answer that
 * is neither fails every call with `fail`: a node that answers garbage is not asked again.
 */
export function repliesById(ids: readonly number[], status: number, body: unknown, fail: (index: number, why: string) => Error): RpcReply[] | null {
  if (!Array.isArray(body)) {
    const refused = body !== null && typeof body === 'object' && (body as { jsonrpc?: unknown }).jsonrpc === '2.0' && 'error' in body;
    return refused ? null : ids.map((_, i) => ({ failed: fail(i, `HTTP ${status}: not a JSON-RPC batch answer`) }));
  }
  const byId = new Map<unknown, unknown>();
  for (const r of body) if (r !== null && typeof r === 'object' && !Array.isArray(r)) byId.set((r as { id?: unknown }).id, r);
  return ids.map((id, i) => (byId.has(id) ? { status, body: byId.get(id) } : { failed: fail(i, `HTTP ${status}: the batch answer has no response with id ${id}`) }));
}

export function rpcReadBatcher(send: {
  /** One call alone. */
  alone(call: RpcCall): Promise<RpcReply>;
  /** Several as one array: each call's reply, or null when the node refused the batch form. */
  batch(calls: RpcCall[]): Promise<RpcReply[] | null>;
}): TurnBatcher<RpcCall, RpcReply> {
  return new TurnBatcher<RpcCall, RpcReply>({
    max: MAX_PER_BATCH,
    groupOf: () => 'reads',
    alone: (call) => send.alone(call),
    async together(calls) {
      const replies = await send.batch(calls);
      // TurnBatcher then asks each call alone.
      if (!replies) throw new Error('the node refused the batch form');
      return replies;
    },
  });
}
