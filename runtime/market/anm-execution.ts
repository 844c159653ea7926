/**
 * The fee step of a routed execution on the ANM lane (ADR 0038). The fee is the buyer's
 * signed transfer with the nonce right after the forwarded seller transfer's, so the chain can
 * include it only after that nonce is used. As for purchases (ADR 0024), the marketplace
 * submits it only once the seller transfer is settled (`required_confirmations` deep): a
 * served answer alone is not enough. The seller transfer carries the seller's reference, not
 * the purchase's, so the indexer cannot route its signals: the node is asked directly, and its
 * answer is told to the purchase as a statement without a position. The fee transfer carries
 * `mp1:<intent>:fee` and is followed by the indexer's positional signals like a purchase leg.
 */
import { legSettled } from '../../machines/purchase/chain-legs.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent } from '../../machines/purchase/events.ts';
import type { PurchaseStatus } from '../../machines/purchase/view.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { includedNow, submitAnmFee } from './anm-purchase.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import { PURCHASE_KIND } from './purchase-read.ts';
import type { Purchases } from './purchases.ts';

export interface AnmFeeDeps {
  lane: AnmLane;
  host: ActorHost;
  purchases: Pick<Purchases, 'read'>;
  now(): number;
}

/**
 * Called after a served answer and by the watch: tells the purchase where the seller transfer
 * stands, and once it is settled submits the fee transfer (again is harmless: the node answers
 * a transfer it has with its hash).
 */
export async function takeAnmExecutionFee(d: AnmFeeDeps, intentId: string, known?: { ctx: PurchaseContext; status: PurchaseStatus } | null): Promise<PurchaseStatus> {
  const target = { kind: PURCHASE_KIND, id: intentId };
  let p = known ?? (await d.purchases.read(intentId));
  const served = (s: number | null | undefined) => s != null && s < 400;
  if (!p || p.status !== 'EXECUTING' || !p.ctx.chain || !served(p.ctx.execution?.seller_status)) return p?.status ?? 'EXECUTING';
  if (!legSettled(p.ctx.chain, 'seller')) {
    const seller = p.ctx.chain.seller;
    const found = await includedNow(d.lane, seller.tx, d.now());
    if (!found) return p.status;
    // The inclusion it already holds only deepens: a depth report without a position says so.
    const event: PurchaseEvent =
      seller.block_hash === found.block_hash && seller.block_height === found.block_height
        ? { type: 'chain.block', id: `lookup-depth:${seller.tx}:${found.head}`, at: found.at, head: found.head }
        : found;
    const told = await d.host.apply(target, event);
    p = { ctx: told.snapshot.context as PurchaseContext, status: told.status as PurchaseStatus };
    if (!p?.ctx.chain || p.status !== 'EXECUTING' || !legSettled(p.ctx.chain, 'seller')) return p?.status ?? 'EXECUTING';
  }
  const fee = p.ctx.execution!.fee;
  const r = await submitAnmFee(d.lane, fee).catch((e: unknown) => ({ ok: false as const, transient: true, reason: 'settle_failed', message: String(e) }));
  // The node refused the transfer (its nonce taken by another, the balance gone): the seller was paid, the fee cannot be.
  if (!r.ok && !('transient' in r)) {
    return (await d.host.apply(target, { type: 'leg.failed', id: `failed:fee:${fee.nonce}`, at: d.now(), leg: 'fee', reason: r.reason } satisfies PurchaseEvent)).status as PurchaseStatus;
  }
  // Submitted: the fee counts as taken once the indexer reports its transfer deep.
  return p.status;
}
