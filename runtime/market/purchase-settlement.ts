/**
 * How a purchase's legs settle (DESIGN §5 "Legs"): a settlement seen on a lane is told to the
 * purchase that bound its nonce, the fee leg is used only once the seller leg has settled, and
 * a watch finds seller legs settled where this process did not see them (ADR 0069).
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent, VerifiedLeg } from '../../machines/purchase/events.ts';
import type { MarketAsset } from '../../machines/money/market.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import type { ExactEvmPayload } from './lanes/eip3009.ts';
import { termsOf, type UsdcLane } from './lanes/usdc-lane.ts';
import type { BoundLeg, SettleResult, TransferTerms } from './lanes/usdc-ledger.ts';
import type { AnmLane, AnmSettle } from './lanes/anm-lane.ts';
import { submitAnmFee } from './anm-purchase.ts';
import { PURCHASE_KIND, readPurchase, type PurchaseRow } from './purchase-read.ts';

/** Seller legs asked of the ledger in one read by the watch. */
const RECONCILE_BATCH = 200;

/** A verified leg's transfer (payer, payee, amount, nonce, as checked against its authorization), spelled as settlements report it. */
export function legTerms(leg: VerifiedLeg): TransferTerms {
  return termsOf({ from: leg.payer, to: leg.pay_to, value: leg.amount, nonce: leg.nonce });
}

export class PurchaseSettlement {
  constructor(
    private readonly deps: {
      db: Db;
      host: ActorHost;
      usdc: UsdcLane;
      anm?: AnmLane | undefined;
      clock?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /**
   * A settlement seen on a lane: if it used a purchase leg's nonce, the purchase is told which
   * transfer did (it counts the leg settled only if that transfer is the leg's own), and after a
   * seller leg the fee is settled. `bound`: the leg's binding when the settling caller knows it.
   */
  async legSettled(lane: MarketAsset, t: TransferTerms, tx: string, bound?: BoundLeg): Promise<void> {
    if (!bound) {
      const { rows } = await this.deps.db.query<{ intent_id: string; leg: string }>(`SELECT intent_id, leg FROM market_leg_nonces WHERE lane = $1 AND authorizer = $2 AND nonce = $3`, [lane, t.from, t.nonce]);
      const row = rows[0];
      if (!row || (row.leg !== 'seller' && row.leg !== 'fee')) return;
      bound = { intent_id: row.intent_id, leg: row.leg };
    }
    const leg = bound.leg;
    const transfer = { from: t.from, to: t.to, value: t.value };
    const r = await this.deps.host.apply({ kind: PURCHASE_KIND, id: bound.intent_id }, { type: 'leg.settled', id: `settled:${leg}:${t.nonce}`, at: this.now(), leg, tx, transfer } satisfies PurchaseEvent);
    if (leg === 'seller' && r.status === 'VERIFIED') await this.settleFee(bound.intent_id);
  }

  /** Uses the fee authorization, only once the purchase has recorded its seller leg as settled. */
  async settleFee(intentId: string): Promise<void> {
    const p = await readPurchase(this.deps.db, intentId);
    const legs = p?.ctx.legs;
    if (!p || p.status !== 'VERIFIED' || !legs?.seller.tx || legs.fee.tx) return;
    const r: AnmSettle | SettleResult = p.ctx.asset === 'ANM' ? await this.submitAnmFee(p.ctx) : await this.deps.usdc.settle(legs.fee.payload as unknown as ExactEvmPayload);
    // Settled earlier where its report was lost (a crash, a receipt that came late): record it now.
    if (p.ctx.asset === 'USDC' && r.ok && r.replay) await this.legSettled('USDC', legTerms(legs.fee), r.tx, { intent_id: intentId, leg: 'fee' });
    // A transient failure leaves the purchase VERIFIED; `reconcile` tries the fee again.
    if (!r.ok && !('transient' in r && r.transient)) {
      await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, { type: 'leg.failed', id: `failed:fee:${legs.fee.nonce}`, at: this.now(), leg: 'fee', reason: r.reason } satisfies PurchaseEvent);
    }
  }

  private submitAnmFee(ctx: PurchaseContext): Promise<AnmSettle> {
    if (!this.deps.anm) return Promise.resolve({ ok: false, reason: 'unsupported_scheme', message: 'no ANM node' });
    return submitAnmFee(this.deps.anm, ctx.legs?.fee);
  }

  /**
   * The watch over VERIFIED purchases: a seller leg settled where this process did not see it
   * (another facilitator, a crash before the fee) is found on the lane's ledger, asked for all of
   * them in one read where the ledger can (the simulated one). Only the leg's own transfer counts;
   * its nonce used otherwise (another transfer, a cancellation) ends the purchase, the fee never
   * used (ADR 0069). The read of open purchases uses their own index (migration 0015), so it
   * costs what is open.
   */
  async reconcile(): Promise<void> {
    const { rows } = await this.deps.db.query<PurchaseRow & { id: string }>(`SELECT id, state, snapshot FROM actors WHERE kind = 'purchase' AND state = 'VERIFIED'`);
    const waiting: Array<{ id: string; seller: VerifiedLeg }> = [];
    for (const row of rows) {
      const ctx = row.snapshot.context as PurchaseContext;
      const seller = ctx.legs?.seller;
      if (!seller) continue;
      if (seller.tx) await this.settleFee(row.id);
      // ANM legs settle by the indexer's signals, not by this watch.
      else if (ctx.asset === 'USDC') waiting.push({ id: row.id, seller });
    }
    for (let i = 0; i < waiting.length; i += RECONCILE_BATCH) {
      const batch = waiting.slice(i, i + RECONCILE_BATCH);
      const terms = batch.map((w) => legTerms(w.seller));
      const uses = await this.deps.usdc.ledger.nonceUses(terms);
      for (const [j, w] of batch.entries()) {
        const use = uses[j];
        const bound = { intent_id: w.id, leg: 'seller' as const };
        if (use?.state === 'settled') await this.legSettled('USDC', terms[j]!, use.tx, bound);
        else if (use?.state === 'spent') {
          await this.deps.host.apply({ kind: PURCHASE_KIND, id: w.id }, { type: 'leg.failed', id: `failed:seller:${w.seller.nonce}`, at: this.now(), leg: 'seller', reason: use.reason } satisfies PurchaseEvent);
        }
      }
    }
  }
}
