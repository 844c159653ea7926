/**
 * Routed execution (DESIGN §5 "Routed execution"; marketplace.md "Endpoints"
 * `POST /api/v1/route/execute`). The marketplace verifies both legs against the quote (the
 * seller's as a purchase does, ADR 0087), records QUOTED → EXECUTING, forwards the buyer's own
 * seller payment header verbatim (it never pays the seller itself), and takes the fee only
 * when the seller answered below 400.
 * Anything else, including a runtime that dies mid-call, ends SELLER_FAILED with the fee
 * authorization unused. On the ANM lane the fee transfer must follow the forwarded seller
 * transfer's nonce and is submitted only once that transfer is settled (ADR 0038).
 *
 * One durable commit stands before the seller's answer goes back (ADR 0046): EXECUTING with the
 * legs' nonce bindings. The answer is recorded, and the fee taken (execution-fee.ts), right after
 * it is handed over.
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent, VerifiedLeg } from '../../machines/purchase/events.ts';
import { statusAfterAnswer } from '../../machines/purchase/rules.ts';
import type { Db } from '../../storage/db.ts';
import { CompanionRefusedError } from '../engine/errors.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { verifyAnmLegs } from './anm-purchase.ts';
import { MarketRefusal } from './errors.ts';
import { ExecutionFees } from './execution-fee.ts';
import { executionResult, sellerHeader, type ExecuteResult } from './execution-answer.ts';
import { checkTarget, prepareCall, SELLER_TIMEOUT_MS, type ForwardOptions, type PreparedCall } from './forward.ts';
import type { UsdcLane } from './lanes/usdc-lane.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import type { Listings } from './listings.ts';
import { PURCHASE_KIND } from './purchase-read.ts';
import type { Purchases } from './purchases.ts';
import { decodeLeg } from './leg-codec.ts';
import { checkUsdcSellerLeg, legStatesAhead, usdcLegForWrite, verifyUsdcLeg, type LegForWrite } from './usdc-purchase.ts';

export type { ExecuteResult } from './execution-answer.ts';

/** Time after the seller's timeout by which an answer must be recorded (else SELLER_FAILED). */
const RECORD_GRACE_MS = 15_000;
const NO_BODY = new Set(['GET', 'HEAD']);

export interface ExecuteInput {
  intentId: string;
  /** `fee_payment.legs.fee` as sent. */
  fee: unknown;
  /** The seller's own x402 payment header value, forwarded verbatim. */
  sellerPayment: string;
  body: unknown;
}

/**
 * Takes the seller's answer as soon as it is known, before it is recorded: the caller sends it
 * to the buyer. It must not throw.
 */
export type Deliver = (result: ExecuteResult) => void;

/** Endpoints of resources seen: a resource id is a hash of (endpoint, method), so they never change. */
const ENDPOINTS_KEPT = 10_000;

export class Executions {
  /** The fee step after a served answer. */
  private readonly fees: ExecutionFees;

  constructor(
    private readonly deps: {
      db: Db;
      host: ActorHost;
      purchases: Purchases;
      listings: Listings;
      usdc: UsdcLane;
      /** The ANM lane's node; without one, ANM listings are not executed. */
      anm?: AnmLane | undefined;
      forward: ForwardOptions;
      clock?: () => number;
    },
  ) {
    this.fees = new ExecutionFees(deps);
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /**
   * Runs one execution. `deliver` gets the seller's answer before it is recorded (ADR 0046);
   * the promise settles once the answer is recorded and, on USDC, the fee step is done. Its
   * `purchase_status` is the status the answer leads to: SELLER_FAILED for an answer of 400 or
   * more, EXECUTING for a served one (the fee follows; `GET /api/v1/purchases/{id}`).
   */
  async execute(input: ExecuteInput, deliver?: Deliver): Promise<ExecuteResult> {
    const { purchases, usdc } = this.deps;
    const feeLeg = decodeLeg(input.fee, usdc.token);
    // A ledger that checks a leg in the statement recording it is not read before (ADR 0059);
    // another one's states for a USDC fee leg are read while the purchase is looked up.
    const feeStates = usdc.ledger.checkCompanion ? undefined : legStatesAhead(usdc, input.fee, feeLeg);
    // Decided from the row this process last saw when it has one: the EXECUTING write checks
    // its version, and a purchase moved on meanwhile is refused there.
    const p = await purchases.recent(input.intentId);
    if (!p) throw new MarketRefusal('not_found', 'No purchase intent with this id.');
    if (p.status === 'EXPIRED' || (p.status === 'QUOTED' && this.now() > p.ctx.expires_at)) throw new MarketRefusal('quote_expired', 'The quote has expired; ask for a new one.');
    if (p.status !== 'QUOTED') throw new MarketRefusal('leg_replayed', `This intent was already used (${p.status}): one execution or purchase per intent.`);
    if (input.fee === undefined || input.fee === null) throw new MarketRefusal('fee_leg_missing', 'fee_payment.legs.fee is missing.', 'fee_leg_missing');
    const anm = p.ctx.asset === 'ANM';
    if (anm && !this.deps.anm) throw new MarketRefusal('invalid_payment', 'This marketplace is not connected to an ANM node.', 'unsupported_scheme');
    const header = sellerHeader(input.sellerPayment);
    // The target's SSRF check (a DNS look-up for a name) runs while the legs are verified; its
    // refusal still comes after theirs.
    const target = this.targetOf(p.ctx.resource_id);
    target.catch(() => undefined);
    const { fee, seller, ledger } = anm ? { ...(await this.verifyAnm(p.ctx, header.name, input)), ledger: null } : await this.verifyUsdcFee(p.ctx, input.fee, feeLeg, feeStates);
    // The ledger's refusal, when the statement below was to check it, still comes before these.
    const refuse = async (err: unknown): Promise<never> => {
      await ledger?.refusal();
      throw err;
    };
    if (header.nonce === fee.nonce) await refuse(new MarketRefusal('invalid_payment', 'seller_payment carries the fee leg itself.', 'invalid_payload'));
    const timeoutMs = this.deps.forward.timeoutMs ?? SELLER_TIMEOUT_MS;
    const deadline = this.now() + timeoutMs + RECORD_GRACE_MS;
    // The fee is settled after the seller answered, so it must still be valid then.
    if (fee.valid_before < deadline) {
      await refuse(new MarketRefusal('invalid_payment', `The fee leg must stay valid at least ${Math.ceil((timeoutMs + RECORD_GRACE_MS) / 1000)} s from now.`, anm ? 'invalid_exact_anm_valid_before' : 'invalid_exact_evm_payload_authorization_valid_before'));
    }
    // The buyer's max_price holds only if what is forwarded pays the quoted seller leg and no
    // more: checked as a purchase checks it, though it is forwarded verbatim (ADR 0087).
    if (!anm) await checkUsdcSellerLeg(usdc, p.ctx, input.sellerPayment, header.parsed).catch(refuse);
    const listing = await target.catch(refuse);

    // Recorded with both transfers bound to this intent and, on ANM, their nonces held (ADR 0043):
    // the fee transfer waits for the seller's, and the forwarded seller transfer backs one execution only.
    // One event id per intent: a second execution is a duplicate, whatever its fee leg.
    const execute = { type: 'purchase.execute', id: `execute:${input.intentId}`, at: this.now(), fee, deadline_at: deadline, ...(seller?.tx_hash && { seller_tx: seller.tx_hash }) } satisfies PurchaseEvent;
    // On USDC the statement checks the fee leg on the ledger too, where the ledger can (ADR 0059).
    const recording = purchases.recordLegs(p.ctx, execute, { seller, fee }, ledger?.companion, ledger?.refusal).catch(async (err: unknown) => {
      if (!(err instanceof CompanionRefusedError) || !ledger) throw err;
      // Refused again after the bindings: the ledger moved in between; its read says why.
      return refuse(new MarketRefusal('ledger_unavailable', 'fee leg: the ledger changed while the execution was recorded; retry.'));
    });
    recording.catch(() => undefined); // its refusal is taken below, a turn of the event loop later
    // The call is made ready while the statement is on the wire (written on the next ticks, before
    // this turn's immediates); nothing is written to the seller until it commits (ADR 0062).
    const call = await new Promise<PreparedCall>((resolve) => setImmediate(() => resolve(this.prepare(listing, header.name, input))));
    const started = await recording.catch((err: unknown) => {
      call.cancel();
      throw err;
    });
    const actor = { kind: PURCHASE_KIND, id: input.intentId };
    if (started.outcome !== 'applied' || started.status !== 'EXECUTING') {
      call.cancel();
      if (started.status === 'QUOTED' || started.status === 'EXPIRED') await refuse(new MarketRefusal('quote_expired', 'The quote expired before the execution was recorded.'));
      await refuse(new MarketRefusal('leg_replayed', 'This intent was already executed: one execution per intent.'));
    }

    // Until its answer is recorded and its fee step done, the watch leaves it to this call.
    this.running.add(input.intentId);
    try {
      const res = await call.send();
      if (!res.ok) {
        await this.deps.host.apply(actor, { type: 'execute.failed', id: `execute-failed:${input.intentId}`, at: this.now(), reason: res.reason } satisfies PurchaseEvent);
        throw new MarketRefusal('seller_unreachable', `The seller endpoint could not be used: ${res.reason}`);
      }
      const answer = { type: 'execute.answered', id: `execute-answered:${input.intentId}`, at: this.now(), seller_status: res.status } satisfies PurchaseEvent;
      // The buyer has the answer before it is recorded: a process that dies in between records
      // none, and the execution's deadline ends it SELLER_FAILED with no fee taken.
      // The status the answer's record will give, from the rule the machine's branches follow: no step made twice.
      const result = executionResult(input.intentId, statusAfterAnswer(started.snapshot.context as PurchaseContext, res.status), res);
      deliver?.(result);
      // The answer is in the buyer's socket already and nobody waits for its record: I/O ready by
      // now (other requests, a caller in this process) goes first. An immediate set from an
      // immediate runs after the event loop's next poll (ADR 0062).
      await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
      // A served USDC answer settles the fee in the statement that records it, where the ledger can.
      const served = res.status < 400 && !anm;
      const withFee = served ? await this.fees.answerWithFee(actor, answer, fee) : null;
      if (withFee) return result;
      const answered = await this.deps.host.apply(actor, answer);
      // The answer's snapshot is the purchase as it stands: no read before the fee step. On ANM
      // the seller transfer is not deep yet: the watch (`reconcile`) takes the fee step.
      if (answered.status === 'EXECUTING' && served) await this.fees.settle(input.intentId, { ctx: answered.snapshot.context as PurchaseContext, status: 'EXECUTING' }, withFee === false);
      return result;
    } finally {
      this.running.delete(input.intentId);
    }
  }

  /** The buyer's seller payment header and body to the listing's endpoint, ready to send. */
  private prepare(listing: { endpoint: string; method: string }, headerName: string, input: ExecuteInput): PreparedCall {
    const method = listing.method.toUpperCase();
    const body = NO_BODY.has(method) ? null : Buffer.from(JSON.stringify(input.body ?? {}), 'utf8');
    const headers = { [headerName]: input.sellerPayment, accept: 'application/json, */*', ...(body ? { 'content-type': 'application/json' } : {}) };
    return prepareCall({ url: listing.endpoint, method, headers, body }, this.deps.forward);
  }

  /** Executions this process is calling or recording (the watch skips them). */
  private readonly running = new Set<string>();

  private readonly endpoints = new Map<string, { endpoint: string; method: string }>();

  /** The listing's endpoint and method, refused when it is gone or its target is not allowed. */
  private async targetOf(resourceId: string): Promise<{ endpoint: string; method: string }> {
    const listing = await this.endpointOf(resourceId);
    if (!listing) throw new MarketRefusal('not_found', 'The quoted listing no longer exists.');
    const refused = await checkTarget(listing.endpoint, this.deps.forward);
    if (refused) throw new MarketRefusal('seller_unreachable', refused);
    return listing;
  }

  private async endpointOf(resourceId: string): Promise<{ endpoint: string; method: string } | null> {
    const kept = this.endpoints.get(resourceId);
    if (kept) return kept;
    const listing = await this.deps.listings.byId(resourceId);
    if (!listing) return null;
    if (this.endpoints.size >= ENDPOINTS_KEPT) this.endpoints.clear();
    const found = { endpoint: listing.endpoint, method: listing.method };
    this.endpoints.set(resourceId, found);
    return found;
  }

  /**
   * ANM: the fee leg and the forwarded seller transfer against the quote and the node (its
   * payee and amount, signature, fresh nonce; the fee from the same payer with the next nonce,
   * and the balance for both). x402 v1 has no name for `native:1`.
   */
  private async verifyAnm(ctx: PurchaseContext, headerName: string, input: ExecuteInput): Promise<{ fee: VerifiedLeg; seller: VerifiedLeg }> {
    if (headerName !== 'PAYMENT-SIGNATURE') throw new MarketRefusal('invalid_payment', 'An ANM seller is paid with an x402 v2 exact-anm payment (PAYMENT-SIGNATURE).', 'invalid_payload');
    return verifyAnmLegs(this.deps.anm!, ctx, { seller: input.sellerPayment, fee: input.fee }, true);
  }

  /**
   * USDC: the fee leg against the quote and its signature (the seller leg is checked apart); its ledger check goes into the
   * statement that records the execution where the ledger can (ADR 0059), else it is read here.
   */
  private async verifyUsdcFee(ctx: PurchaseContext, raw: unknown, decoded: ReturnType<typeof decodeLeg>, states: ReturnType<typeof legStatesAhead>): Promise<{ fee: VerifiedLeg; seller: null; ledger: LegForWrite | null }> {
    const inWrite = await usdcLegForWrite(this.deps.usdc, ctx, 'fee', raw, decoded);
    if (inWrite) return { fee: inWrite.leg, seller: null, ledger: inWrite };
    return { fee: await verifyUsdcLeg(this.deps.usdc, ctx, 'fee', raw, decoded, states), seller: null, ledger: null };
  }

  /** Executions left with a served answer and an unsettled fee (a crash between the two), but those this process is still running. */
  async reconcile(): Promise<void> {
    const { rows } = await this.deps.db.query<{ id: string; snapshot: { context: PurchaseContext } }>(`SELECT id, snapshot FROM actors WHERE kind = 'purchase' AND state = 'EXECUTING'`);
    for (const row of rows) {
      if (this.running.has(row.id)) continue;
      const s = row.snapshot.context.execution?.seller_status;
      if (s != null && s < 400) await this.fees.settle(row.id, { ctx: row.snapshot.context, status: 'EXECUTING' }).catch(() => undefined);
    }
  }
}
