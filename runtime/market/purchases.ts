/**
 * Quotes and purchases (DESIGN §5 "Quote", "Legs", "Purchase"). A quote creates a purchase
 * actor in QUOTED; a purchase verifies both legs on the lane, binds their nonces to the
 * intent and sends `purchase.verify`. The fee leg is settled only once the seller leg has
 * settled (`legSettled`, and `reconcile` for settlements this process did not see).
 */
import { randomBytes } from 'node:crypto';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent, VerifiedLeg } from '../../machines/purchase/events.ts';
import { purchaseResource, priceSplitView, type PurchaseStatus } from '../../machines/purchase/view.ts';
import { MARKET_FEE_BPS, MARKET_LANES, assertGross, priceSplit, type MarketAsset } from '../../machines/money/market.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { MarketRefusal } from './errors.ts';
import type { ExactEvmPayload } from './lanes/eip3009.ts';
import type { UsdcLane } from './lanes/usdc-lane.ts';
import type { SettleResult } from './lanes/usdc-ledger.ts';
import { legReference } from './lanes/anm-leg.ts';
import type { AnmLane, AnmSettle } from './lanes/anm-lane.ts';
import { catchUpAnmLegs, submitAnmFee, verifyAnmLegs } from './anm-purchase.ts';
import { ANM_SETTLEMENT_DEPTH } from '../../machines/purchase/chain-legs.ts';
import { decodeLeg, paymentHeaders } from './leg-codec.ts';
import { assetId, DEFAULT_TIMEOUT_S, laneExtra, laneNetwork, type PaymentRequirements } from './requirements.ts';
import type { SearchIndex } from './search-index.ts';

export const PURCHASE_KIND = 'purchase';

export interface QuoteInput {
  capability: string;
  maxPrice?: string | undefined;
  asset: MarketAsset;
  maxLatencyMs?: number | undefined;
}

interface Row {
  state: string;
  snapshot: PersistedSnapshot;
}

export class Purchases {
  constructor(
    private readonly deps: {
      db: Db;
      host: ActorHost;
      index: SearchIndex;
      usdc: UsdcLane;
      /** The ANM lane's node; without one, ANM quotes are made but not purchased. */
      anm?: AnmLane | undefined;
      /** Confirmations at which an ANM leg counts as settled (DESIGN §3: 12; lower for tests only). */
      anmConfirmations?: number | undefined;
      feeAddresses: Record<MarketAsset, string>;
      clock?: () => number;
    },
  ) {
    deps.usdc.onSettled((authorizer, nonce, tx) => this.legSettled('USDC', authorizer, nonce, tx));
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /** The best listing for the capability under the ceilings; a purchase actor in QUOTED. */
  async quote(q: QuoteInput) {
    const hits = this.deps.index.search({ capability: q.capability, maxPrice: q.maxPrice, asset: q.asset }).filter((h) => {
      const p50 = h.record.latency_p50_ms;
      return q.maxLatencyMs === undefined || p50 === null || p50 <= q.maxLatencyMs;
    });
    // Listings with latency data under the ceiling first (by relevance), those without last.
    const best = [...hits.filter((h) => h.record.latency_p50_ms !== null), ...hits.filter((h) => h.record.latency_p50_ms === null)][0];
    const accepted = best?.record.accepted_assets.find((a) => a.asset === q.asset);
    if (!best || !accepted) throw new MarketRefusal('no_matching_resource', `No listing offers "${q.capability}" in ${q.asset} under the ceilings.`);
    const split = priceSplit(q.asset, BigInt(accepted.seller_price_atomic));
    assertGross(split.total, split.seller, split.fee);
    const at = this.now();
    const intentId = `pi_${randomBytes(12).toString('hex')}`;
    const event = {
      type: 'purchase.quote',
      id: `quote:${intentId}`,
      at,
      intent_id: intentId,
      resource_id: best.record.resource_id,
      asset: q.asset,
      network: laneNetwork(q.asset, this.deps.usdc.token),
      scheme: MARKET_LANES[q.asset].scheme,
      seller: { pay_to: accepted.pay_to, amount: split.seller.toString() },
      fee: { pay_to: this.deps.feeAddresses[q.asset], amount: split.fee.toString() },
      total: split.total.toString(),
      fee_bps: MARKET_FEE_BPS,
      expires_at: at + DEFAULT_TIMEOUT_S * 1000,
      ...(q.asset === 'ANM' && { required_confirmations: this.deps.anmConfirmations ?? ANM_SETTLEMENT_DEPTH }),
    } satisfies PurchaseEvent;
    const ref = (leg: 'seller' | 'fee') => (q.asset === 'ANM' ? { reference: legReference(intentId, leg) } : {});
    await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, event);
    const ctx = { ...event, created_at: at } as unknown as PurchaseContext;
    return {
      intent_id: intentId,
      status: 'QUOTED' as const,
      resource: { resource_id: best.record.resource_id, name: best.record.name, endpoint: best.record.endpoint, method: best.record.method },
      price: priceSplitView(ctx),
      expires_at: Math.floor(event.expires_at / 1000),
      payment_requirements: {
        x402Version: 2,
        resource: { url: best.record.endpoint, description: best.record.description },
        accepts: [
          {
            scheme: event.scheme,
            network: event.network,
            asset: assetId(q.asset, this.deps.usdc.token),
            amount: event.total,
            payTo: event.seller.pay_to,
            maxTimeoutSeconds: DEFAULT_TIMEOUT_S,
            extra: { ...laneExtra(q.asset, this.deps.usdc.token), intent_id: intentId, legs: { seller: { payTo: event.seller.pay_to, amount: event.seller.amount, ...ref('seller') }, fee: { payTo: event.fee.pay_to, amount: event.fee.amount, ...ref('fee') } } },
          } satisfies PaymentRequirements,
        ],
      },
    };
  }

  async read(intentId: string): Promise<{ ctx: PurchaseContext; status: PurchaseStatus } | null> {
    const { rows } = await this.deps.db.query<Row>(`SELECT state, snapshot FROM actors WHERE id = $1 AND kind = $2`, [intentId, PURCHASE_KIND]);
    const row = rows[0];
    return row ? { ctx: row.snapshot.context as PurchaseContext, status: row.state as PurchaseStatus } : null;
  }

  async resource(intentId: string) {
    const p = await this.read(intentId);
    return p ? purchaseResource(p.ctx, p.status) : null;
  }

  /** Verifies both legs against the quote; nothing is settled here. */
  async purchase(intentId: string, legs: { seller?: unknown; fee?: unknown }) {
    const p = await this.read(intentId);
    if (!p) throw new MarketRefusal('not_found', 'No purchase intent with this id.');
    if (p.status === 'EXPIRED' || (p.status === 'QUOTED' && this.now() > p.ctx.expires_at)) throw new MarketRefusal('quote_expired', 'The quote has expired; ask for a new one.');
    if (legs.fee === undefined || legs.fee === null) throw new MarketRefusal('fee_leg_missing', 'payment.legs.fee is missing: a purchase needs both legs.', 'fee_leg_missing');
    if (legs.seller === undefined || legs.seller === null) throw new MarketRefusal('invalid_payment', 'payment.legs.seller is missing.', 'invalid_payload');
    const { seller, fee } = await this.verifyLegs(p.ctx, { seller: legs.seller, fee: legs.fee });
    if (p.status !== 'QUOTED') {
      // The same legs again get the same answer (a retried purchase); other legs are a conflict.
      if (p.ctx.legs?.seller.nonce === seller.nonce && p.ctx.legs.fee.nonce === fee.nonce) return this.purchased(p.ctx, p.status);
      throw new MarketRefusal('leg_replayed', 'This intent was already purchased with other legs.');
    }
    if (p.ctx.asset === 'USDC' && seller.payer === fee.payer) {
      const balance = await this.deps.usdc.ledger.balanceOf(seller.payer).catch((e: unknown) => {
        throw new MarketRefusal('ledger_unavailable', `The USDC ledger could not be read: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
      });
      if (balance < BigInt(p.ctx.total)) throw new MarketRefusal('invalid_payment', 'The payer balance is below the total.', 'invalid_exact_evm_insufficient_balance');
    }
    // The fee is settled after the seller leg, so its authorization must outlive the seller's.
    if (fee.valid_before < seller.valid_before) throw new MarketRefusal('invalid_payment', 'The fee leg must be valid at least as long as the seller leg.', 'invalid_exact_evm_payload_authorization_valid_before');
    await this.bind(p.ctx.asset, intentId, seller, 'seller');
    await this.bind(p.ctx.asset, intentId, fee, 'fee');
    const r = await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, { type: 'purchase.verify', id: `verify:${intentId}:${seller.nonce}`, at: this.now(), legs: { seller, fee } } satisfies PurchaseEvent);
    if (r.status !== 'VERIFIED' && r.status !== 'SETTLED') throw new MarketRefusal('quote_expired', 'The quote expired before the purchase was recorded.');
    if (this.deps.anm && p.ctx.asset === 'ANM') {
      for (const e of await catchUpAnmLegs(this.deps.anm, r.snapshot.context as PurchaseContext, this.now())) await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, e);
    }
    return this.purchased(r.snapshot.context as PurchaseContext, r.status);
  }

  private purchased(ctx: PurchaseContext, status: PurchaseStatus) {
    const seller = ctx.legs?.seller;
    return {
      ...purchaseResource(ctx, status),
      seller_payment: seller ? paymentHeaders(ctx.asset, seller.payload, { payTo: ctx.seller.pay_to, amount: ctx.seller.amount, reference: ctx.asset === 'ANM' ? legReference(ctx.intent_id, 'seller') : undefined }, this.deps.usdc.token) : null,
    };
  }

  private async verifyLegs(ctx: PurchaseContext, legs: { seller: unknown; fee: unknown }): Promise<{ seller: VerifiedLeg; fee: VerifiedLeg }> {
    if (ctx.asset === 'ANM') {
      if (!this.deps.anm) throw new MarketRefusal('invalid_payment', 'This marketplace is not connected to an ANM node.', 'unsupported_scheme');
      return verifyAnmLegs(this.deps.anm, ctx, legs);
    }
    return { seller: await this.verifyLeg(ctx, 'seller', legs.seller), fee: await this.verifyLeg(ctx, 'fee', legs.fee) };
  }

  async verifyLeg(ctx: PurchaseContext, leg: 'seller' | 'fee', raw: unknown): Promise<VerifiedLeg> {
    const decoded = decodeLeg(raw, this.deps.usdc.token);
    const refuse = (reason: string, message: string): never => {
      if (reason === 'invalid_exact_evm_nonce_already_used') throw new MarketRefusal('leg_replayed', `${leg} leg: ${message}`, reason);
      throw new MarketRefusal('invalid_payment', `${leg} leg: ${message}`, reason);
    };
    if (!decoded) return refuse('invalid_payload', 'not base64 JSON of an x402 payment payload');
    const expected = { payTo: ctx[leg].pay_to, amount: BigInt(ctx[leg].amount) };
    const c = await this.deps.usdc.verify(decoded.accepted, decoded.payload, expected, { allowUsedNonce: ctx.legs?.[leg].nonce !== undefined });
    if (!c.ok && c.unavailable) throw new MarketRefusal('ledger_unavailable', `${leg} leg: ${c.message}`, c.reason);
    if (!c.ok) return refuse(c.reason, c.message);
    const a = c.payload.authorization;
    return { pay_to: ctx[leg].pay_to, amount: a.value, payer: c.payer, nonce: a.nonce.toLowerCase(), valid_before: Number(a.validBefore) * 1000, payload: { ...c.payload } };
  }

  async bind(lane: MarketAsset, intentId: string, leg: VerifiedLeg, name: 'seller' | 'fee'): Promise<void> {
    const { rows } = await this.deps.db.query<{ intent_id: string; leg: string }>(
      `WITH ins AS (INSERT INTO market_leg_nonces (lane, authorizer, nonce, intent_id, leg) VALUES ($5, $1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING intent_id, leg)
       SELECT intent_id, leg FROM ins UNION ALL SELECT intent_id, leg FROM market_leg_nonces WHERE lane = $5 AND authorizer = $1 AND nonce = $2 LIMIT 1`,
      [leg.payer, leg.nonce, intentId, name, lane],
    );
    const bound = rows[0];
    if (!bound || bound.intent_id !== intentId || bound.leg !== name) throw new MarketRefusal('leg_replayed', `The ${name} leg's nonce is already bound to another purchase.`, 'invalid_exact_evm_nonce_already_used');
  }

  /** A settlement seen on a lane: if it was a purchase's seller leg, record it and settle the fee. */
  async legSettled(lane: MarketAsset, authorizer: string, nonce: string, tx: string): Promise<void> {
    const { rows } = await this.deps.db.query<{ intent_id: string; leg: string }>(`SELECT intent_id, leg FROM market_leg_nonces WHERE lane = $1 AND authorizer = $2 AND nonce = $3`, [lane, authorizer, nonce]);
    const bound = rows[0];
    if (!bound || (bound.leg !== 'seller' && bound.leg !== 'fee')) return;
    const leg = bound.leg;
    await this.deps.host.apply({ kind: PURCHASE_KIND, id: bound.intent_id }, { type: 'leg.settled', id: `settled:${leg}:${nonce}`, at: this.now(), leg, tx } satisfies PurchaseEvent);
    if (leg === 'seller') await this.settleFee(bound.intent_id);
  }

  /** Uses the fee authorization, only once the purchase has recorded its seller leg as settled. */
  async settleFee(intentId: string): Promise<void> {
    const p = await this.read(intentId);
    const legs = p?.ctx.legs;
    if (!p || p.status !== 'VERIFIED' || !legs?.seller.tx || legs.fee.tx) return;
    const r: AnmSettle | SettleResult = p.ctx.asset === 'ANM' ? await this.submitAnmFee(p.ctx) : await this.deps.usdc.settle(legs.fee.payload as unknown as ExactEvmPayload);
    // Settled earlier where its report was lost (a crash, a receipt that came late): record it now.
    if (p.ctx.asset === 'USDC' && r.ok && r.replay) await this.legSettled('USDC', legs.fee.payer, legs.fee.nonce, r.tx);
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
   * (another facilitator, a crash before the fee) is found from the lane's authorization state.
   */
  async reconcile(): Promise<void> {
    const { rows } = await this.deps.db.query<Row & { id: string }>(`SELECT id, state, snapshot FROM actors WHERE kind = $1 AND state = 'VERIFIED'`, [PURCHASE_KIND]);
    for (const row of rows) {
      const ctx = row.snapshot.context as PurchaseContext;
      const seller = ctx.legs?.seller;
      if (!seller) continue;
      if (seller.tx) await this.settleFee(row.id);
      // ANM legs settle by the indexer's signals, not by this watch.
      else if (ctx.asset === 'USDC' && await this.deps.usdc.ledger.authorizationState(seller.payer, seller.nonce)) await this.legSettled('USDC', seller.payer, seller.nonce, `seen:${seller.nonce}`);
    }
  }
}
