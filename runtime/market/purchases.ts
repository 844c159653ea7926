/**
 * Quotes and purchases (DESIGN §5 "Quote", "Legs", "Purchase"). A quote creates a purchase
 * actor in QUOTED; a purchase verifies both legs on the lane, binds their nonces to the
 * intent and sends `purchase.verify`. The fee leg is settled only once the seller leg has
 * settled (purchase-settlement.ts: `legSettled`, and `reconcile` for settlements this process
 * did not see).
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent, VerifiedLeg } from '../../machines/purchase/events.ts';
import { purchaseResource, type PurchaseStatus } from '../../machines/purchase/view.ts';
import type { MarketAsset } from '../../machines/money/market.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import type { CachedActor } from '../engine/snapshot-cache.ts';
import { MarketRefusal } from './errors.ts';
import type { KnownStates, UsdcLane } from './lanes/usdc-lane.ts';
import type { BoundLeg, TransferTerms } from './lanes/usdc-ledger.ts';
import { legReference } from './lanes/anm-leg.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import { anmNonces, catchUpAnmLegs, verifyAnmLegs } from './anm-purchase.ts';
import { holdAlone, holdCompanion } from './anm-nonce-holds.ts';
import { ANM_SETTLEMENT_DEPTH } from '../../machines/purchase/chain-legs.ts';
import { paymentHeaders } from './leg-codec.ts';
import { ledgerReadAhead, verifyUsdcLeg, verifyUsdcLegs, type DecodedLegs, type LedgerReadAhead } from './usdc-purchase.ts';
import { bindingCompanion, bindLegs } from './leg-nonces.ts';
import { CompanionRefusedError, UnknownActorError } from '../engine/errors.ts';
import { joinCompanions } from '../engine/companions.ts';
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import { DEFAULT_TIMEOUT_S } from './requirements.ts';
import { newIntentId } from './intent-id.ts';
import { quoteAnswer, quoteAnswerJson, quoteTerms, type QuoteAnswer, type QuoteTerms } from './quote-answer.ts';
import type { SearchIndex } from './search-index.ts';
import { quoteChoice } from './quote-choice.ts';
import { pinnedRefusal, type PinnedCeilings } from './quote-pinned.ts';
import { asRead, PURCHASE_KIND, readPurchase, type PurchaseRead, type PurchaseRow } from './purchase-read.ts';
import { PurchaseSettlement } from './purchase-settlement.ts';

/** The best match for `capability`, or (ADR 0085) the one listing `resourceId` names, whatever the capability. */
export type QuoteInput = PinnedCeilings & ({ capability: string; resourceId?: undefined } | { resourceId: string; capability?: string | undefined });

export type PurchaseResponse = ReturnType<typeof purchaseResource> & { seller_payment: ReturnType<typeof paymentHeaders> | null };

export class Purchases {
  private readonly settlement: PurchaseSettlement;

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
    this.settlement = new PurchaseSettlement(deps);
    deps.usdc.onSettled((transfer, tx, bound) => this.legSettled('USDC', transfer, tx, bound));
  }

  private readonly terms = new WeakMap<ListingRecord, Partial<Record<MarketAsset, QuoteTerms>>>();

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /** The best listing for the capability (or the one `resourceId` names) under the ceilings; a purchase actor in QUOTED. */
  async quote(q: QuoteInput): Promise<QuoteAnswer> {
    const { terms, intentId, expiresAt } = await this.quoted(q);
    return quoteAnswer(terms, intentId, expiresAt);
  }

  /** `quote`'s answer as JSON text, filled into the text kept for the listing's version and asset. */
  async quoteJson(q: QuoteInput): Promise<string> {
    const { terms, intentId, expiresAt } = await this.quoted(q);
    return quoteAnswerJson(terms, intentId, expiresAt);
  }

  private async quoted(q: QuoteInput): Promise<{ terms: QuoteTerms; intentId: string; expiresAt: number }> {
    // Listings with latency data under the ceiling first (by relevance), those without last.
    // A pinned listing that cannot be quoted is refused in `pinned`, with the reason.
    const best = q.resourceId === undefined ? quoteChoice(this.deps.index.search({ capability: q.capability, maxPrice: q.maxPrice, asset: q.asset }), q.maxLatencyMs)?.record : await this.pinned(q.resourceId, q);
    const terms = best && this.termsOf(best, q.asset);
    if (!terms) throw new MarketRefusal('no_matching_resource', `No listing offers "${q.capability ?? ''}" in ${q.asset} under the ceilings.`);
    const at = this.now();
    const intentId = newIntentId();
    const event = {
      type: 'purchase.quote',
      id: `quote:${intentId}`,
      at,
      intent_id: intentId,
      resource_id: terms.record.resource_id,
      asset: q.asset,
      network: terms.network,
      scheme: terms.scheme,
      seller: { pay_to: terms.seller.pay_to, amount: terms.seller.amount },
      fee: { pay_to: terms.fee.pay_to, amount: terms.fee.amount },
      total: terms.total,
      fee_bps: terms.fee_bps,
      expires_at: at + DEFAULT_TIMEOUT_S * 1000,
      ...(q.asset === 'ANM' && { required_confirmations: this.deps.anmConfirmations ?? ANM_SETTLEMENT_DEPTH }),
      // A seller not yet seen answering a 402 is taken for v2 (ADR 0080).
      seller_x402_version: best.x402_version ?? 2,
      // The seller leg is made and checked on the seller's terms as quoted, not as probed later (ADR 0091).
      ...(terms.seller_offer && { seller_offer: terms.seller_offer }),
    } satisfies PurchaseEvent;
    await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, event);
    return { terms, intentId, expiresAt: event.expires_at };
  }

  /** The listing `resourceId` names if it may be quoted under the ceilings (quote-pinned.ts). */
  private async pinned(resourceId: string, q: QuoteInput): Promise<ListingRecord> {
    const record = await this.deps.index.listing(resourceId);
    if (!record) throw new MarketRefusal('not_found', 'No listing with this resource_id.');
    const why = pinnedRefusal(record, q);
    if (why) throw new MarketRefusal('no_matching_resource', why);
    return record;
  }

  /** A listing version's terms in one asset, kept with its record (a new version is a new record); undefined: not offered in it. */
  private termsOf(record: ListingRecord, asset: MarketAsset): QuoteTerms | undefined {
    let byAsset = this.terms.get(record);
    let t = byAsset?.[asset];
    if (t) return t;
    const accepted = record.accepted_assets.find((a) => a.asset === asset);
    if (!accepted) return undefined;
    t = quoteTerms(record, accepted, asset, this.deps.usdc.token, this.deps.feeAddresses[asset]);
    if (!byAsset) this.terms.set(record, (byAsset = {}));
    byAsset[asset] = t;
    return t;
  }

  read(intentId: string): Promise<PurchaseRead | null> {
    return readPurchase(this.deps.db, intentId);
  }

  /**
   * The purchase as this process last wrote or read it, else read with its whole row, which
   * the engine keeps so that the next event takes the optimistic path (ADR 0012). Possibly
   * stale: only for decisions the next write checks again (ADR 0046).
   */
  async recent(intentId: string): Promise<PurchaseRead | null> {
    const kept = this.deps.host.seen(intentId);
    if (kept) return asRead(kept);
    const { rows } = await this.deps.db.query<Required<PurchaseRow>>(`SELECT state, snapshot, version, merchant, mode FROM actors WHERE id = $1 AND kind = $2`, [intentId, PURCHASE_KIND]);
    const row = rows[0];
    if (!row) return null;
    this.deps.host.observe(intentId, row);
    return asRead(row);
  }

  /** The purchase's row as this process last wrote or read it, if it still holds it (possibly stale: for a read that checks its version). */
  kept(intentId: string): CachedActor | undefined {
    return this.deps.host.seen(intentId);
  }

  async resource(intentId: string) {
    const p = await this.read(intentId);
    return p ? purchaseResource(p.ctx, p.status) : null;
  }

  /**
   * Verifies both legs against the quote; nothing is settled here. `seen`: the purchase as read
   * with the idempotency claim, which spares a read of its own. `record`: the first response's
   * record, written in the statement that records `VERIFIED` when this request makes it
   * (`recorded` in the result, and then no response: the record's is the one to send; ADR 0034),
   * with both legs' nonce bindings. `decoded`: the legs as the claim's read ahead decoded them.
   */
  async purchase(intentId: string, legs: { seller?: unknown; fee?: unknown }, opts: { seen?: PurchaseRead | null; record?: CreateCompanion; known?: KnownStates; decoded?: DecodedLegs } = {}): Promise<{ response: PurchaseResponse; recorded: false } | { response: null; recorded: true }> {
    const p = opts.seen === undefined ? await this.read(intentId) : opts.seen;
    if (p?.row) this.deps.host.observe(intentId, p.row);
    if (!p) throw new MarketRefusal('not_found', 'No purchase intent with this id.');
    if (p.status === 'EXPIRED' || (p.status === 'QUOTED' && this.now() > p.ctx.expires_at)) throw new MarketRefusal('quote_expired', 'The quote has expired; ask for a new one.');
    if (legs.fee === undefined || legs.fee === null) throw new MarketRefusal('fee_leg_missing', 'payment.legs.fee is missing: a purchase needs both legs.', 'fee_leg_missing');
    if (legs.seller === undefined || legs.seller === null) throw new MarketRefusal('invalid_payment', 'payment.legs.seller is missing.', 'invalid_payload');
    const { seller, fee, payerBalance } = await this.verifyLegs(p.ctx, { seller: legs.seller, fee: legs.fee }, opts.known, opts.decoded);
    if (p.status !== 'QUOTED') return { response: this.again(p, seller, fee), recorded: false };
    // One payer signed both legs: its balance must cover the total, not only each leg.
    if (payerBalance !== undefined && payerBalance < BigInt(p.ctx.total)) throw new MarketRefusal('invalid_payment', 'The payer balance is below the total.', 'invalid_exact_evm_insufficient_balance');
    // The fee is settled after the seller leg, so its authorization must outlive the seller's.
    if (fee.valid_before < seller.valid_before) throw new MarketRefusal('invalid_payment', 'The fee leg must be valid at least as long as the seller leg.', 'invalid_exact_evm_payload_authorization_valid_before');
    // One nonce cannot back two transfers: the machine refuses such legs too (`legsMatchQuote`).
    if (seller.nonce === fee.nonce) throw new MarketRefusal('invalid_payment', 'The seller and fee legs carry the same nonce: each leg needs its own.', 'invalid_payload');
    const event = { type: 'purchase.verify', id: `verify:${intentId}:${seller.nonce}`, at: this.now(), legs: { seller, fee } } satisfies PurchaseEvent;
    const r = await this.recordLegs(p.ctx, event, { seller, fee }, opts.record);
    if (r.status === 'QUOTED' && r.outcome === 'ignored' && this.now() <= p.ctx.expires_at) throw new MarketRefusal('invalid_payment', 'The legs do not match the quote.', 'invalid_payload');
    if (r.status !== 'VERIFIED' && r.status !== 'SETTLED') throw new MarketRefusal('quote_expired', 'The quote expired before the purchase was recorded.');
    // Bought meanwhile by another request: the same legs get its answer, other legs a conflict.
    if (r.outcome !== 'applied') return { response: this.again(asRead(r), seller, fee), recorded: false };
    if (this.deps.anm && p.ctx.asset === 'ANM') {
      for (const e of await catchUpAnmLegs(this.deps.anm, r.snapshot.context as PurchaseContext, this.now())) await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, e);
    }
    // A recorded first response was rendered for its record already: the caller sends that text.
    if (r.companionWritten === true && opts.record !== undefined) return { response: null, recorded: true };
    return { response: this.responseOf(r), recorded: false };
  }

  /** The purchase's answer from an actor's state: the resource and the seller leg as ready headers. */
  responseOf(r: { status: string; snapshot: PersistedSnapshot }): PurchaseResponse {
    return this.purchased(r.snapshot.context as PurchaseContext, r.status as PurchaseStatus);
  }

  /** A purchase no longer QUOTED: the same legs again get the same answer (a retry); other legs are a conflict. */
  private again(p: PurchaseRead, seller: VerifiedLeg, fee: VerifiedLeg) {
    if (p.ctx.legs?.seller.nonce === seller.nonce && p.ctx.legs.fee.nonce === fee.nonce) return this.purchased(p.ctx, p.status);
    throw new MarketRefusal('leg_replayed', 'This intent was already purchased with other legs.');
  }

  private purchased(ctx: PurchaseContext, status: PurchaseStatus): PurchaseResponse {
    const seller = ctx.legs?.seller;
    return {
      ...purchaseResource(ctx, status),
      seller_payment: seller
        ? paymentHeaders(ctx.asset, seller.payload, { payTo: ctx.seller.pay_to, amount: ctx.seller.amount, reference: ctx.asset === 'ANM' ? legReference(ctx.intent_id, 'seller') : undefined, offer: ctx.seller_offer }, this.deps.usdc.token, ctx.seller_x402_version ?? 2)
        : null,
    };
  }

  private async verifyLegs(ctx: PurchaseContext, legs: { seller: unknown; fee: unknown }, known?: KnownStates, decoded?: DecodedLegs): Promise<{ seller: VerifiedLeg; fee: VerifiedLeg; payerBalance?: bigint | undefined }> {
    if (ctx.asset === 'ANM') {
      if (!this.deps.anm) throw new MarketRefusal('invalid_payment', 'This marketplace is not connected to an ANM node.', 'unsupported_scheme');
      return verifyAnmLegs(this.deps.anm, ctx, legs);
    }
    return verifyUsdcLegs(this.deps.usdc, ctx, legs, known, decoded);
  }

  /** The ledger read of the legs' states for the claim to carry, where the ledger can (ADR 0044). */
  ledgerReadFor(legs: { seller?: unknown; fee?: unknown }): LedgerReadAhead | undefined {
    return ledgerReadAhead(this.deps.usdc, legs);
  }

  /** One USDC leg against the quote, its signature and the ledger (routed execution's fee leg). */
  verifyLeg(ctx: PurchaseContext, leg: 'seller' | 'fee', raw: unknown): Promise<VerifiedLeg> {
    return verifyUsdcLeg(this.deps.usdc, ctx, leg, raw);
  }

  bind(lane: MarketAsset, intentId: string, leg: VerifiedLeg, name: 'seller' | 'fee'): Promise<void> {
    return bindLegs(this.deps.db, lane, intentId, [{ leg, name }]);
  }

  /**
   * Applies the event that records a purchase's legs (`purchase.verify`, `purchase.execute`)
   * with their nonce bindings and, on ANM, their account nonces held (ADR 0043), written in its
   * own statement. When one is taken already, that statement writes nothing: they are written on
   * their own in one transaction, which tells a replay or a held nonce (thrown, nothing kept)
   * from this purchase's own earlier attempt, and the event is applied without them. `record`:
   * a companion of the caller's, written with them (a first response's record, a fee leg's
   * ledger check); `refused` runs first when that statement is refused, to throw `record`'s own
   * reason before the bindings' (a ledger check reads the ledger).
   */
  async recordLegs(ctx: PurchaseContext, event: PurchaseEvent, legs: { seller: VerifiedLeg | null; fee: VerifiedLeg }, record?: CreateCompanion | null, refused?: () => Promise<void>): Promise<ApplyResult> {
    return this.bindAndRecord(ctx, event, legs, record, refused).catch((err: unknown) => {
      // The purchase this process kept is gone (a quote lost with PostgreSQL's crash: its commit
      // did not wait for the flush, ADR 0064): nothing was bound or recorded.
      if (err instanceof UnknownActorError) throw new MarketRefusal('not_found', 'No purchase intent with this id.');
      throw err;
    });
  }

  private async bindAndRecord(ctx: PurchaseContext, event: PurchaseEvent, legs: { seller: VerifiedLeg | null; fee: VerifiedLeg }, record?: CreateCompanion | null, refused?: () => Promise<void>): Promise<ApplyResult> {
    const intentId = ctx.intent_id;
    const toBind = [...(legs.seller ? [{ leg: legs.seller, name: 'seller' as const }] : []), { leg: legs.fee, name: 'fee' as const }];
    const held = ctx.asset === 'ANM' && legs.seller ? anmNonces({ seller: legs.seller, fee: legs.fee }) : null;
    const binding = held ? joinCompanions(bindingCompanion(ctx.asset, intentId, toBind), holdCompanion(intentId, held)) : bindingCompanion(ctx.asset, intentId, toBind);
    const target = { kind: PURCHASE_KIND, id: intentId };
    try {
      return await this.deps.host.apply(target, event, record ? joinCompanions(binding, record) : binding);
    } catch (err) {
      if (!(err instanceof CompanionRefusedError)) throw err;
      // `record`'s own refusal, if it says why, comes before the bindings'.
      await refused?.();
      if (!held) await bindLegs(this.deps.db, ctx.asset, intentId, toBind);
      else {
        await this.deps.db.tx(async (q) => {
          await holdAlone(q, intentId, held);
          await bindLegs(q, ctx.asset, intentId, toBind);
        });
      }
      return this.deps.host.apply(target, event, record ?? undefined);
    }
  }

  /** A settlement seen on a lane (purchase-settlement.ts). */
  legSettled(lane: MarketAsset, t: TransferTerms, tx: string, bound?: BoundLeg): Promise<void> {
    return this.settlement.legSettled(lane, t, tx, bound);
  }

  /** The watch over VERIFIED purchases (purchase-settlement.ts). */
  reconcile(): Promise<void> {
    return this.settlement.reconcile();
  }
}
