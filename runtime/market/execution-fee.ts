/**
 * The fee step of a routed execution (DESIGN §5 "Routed execution"; ADR 0046, 0052): the fee
 * authorization is used only once the seller answered below 400, in the statement that records
 * the answer where the ledger can, else on its own right after; on ANM once the forwarded
 * seller transfer is settled (anm-execution.ts).
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseEvent, VerifiedLeg } from '../../machines/purchase/events.ts';
import type { PurchaseStatus } from '../../machines/purchase/view.ts';
import { CompanionRefusedError } from '../engine/errors.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import { takeAnmExecutionFee } from './anm-execution.ts';
import type { ExactEvmPayload } from './lanes/eip3009.ts';
import type { UsdcLane } from './lanes/usdc-lane.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import { PURCHASE_KIND } from './purchase-read.ts';
import { legTerms } from './purchase-settlement.ts';
import type { Purchases } from './purchases.ts';

type Purchase = { ctx: PurchaseContext; status: PurchaseStatus };

export class ExecutionFees {
  constructor(
    private readonly deps: {
      host: ActorHost;
      purchases: Purchases;
      usdc: UsdcLane;
      anm?: AnmLane | undefined;
      clock?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /**
   * A served answer recorded with the fee's settlement in its statement (ADR 0052): true when
   * written, or when the purchase no longer executes (its EXECUTING record lost, or ended); null
   * when the ledger cannot carry it, false when the ledger refused it (nonce used, balance
   * short): then nothing was written, and the answer is recorded on its own.
   */
  async answerWithFee(actor: { kind: string; id: string }, answer: PurchaseEvent & { type: 'execute.answered' }, fee: VerifiedLeg): Promise<boolean | null> {
    const inOne = this.feeSettlement(fee);
    if (!inOne) return null;
    try {
      const r = await this.deps.host.apply(actor, { ...answer, fee_tx: inOne.tx }, inOne.companion);
      // Not taken by a purchase that no longer executes: the answer alone would not be either, and
      // sent later it could land on another execution of the intent, recorded meanwhile, and take
      // its fee for this call.
      return r.outcome === 'applied' || r.status !== 'EXECUTING' ? true : null;
    } catch (err) {
      if (err instanceof CompanionRefusedError) return false;
      throw err;
    }
  }

  private feeSettlement(fee: VerifiedLeg) {
    const { usdc } = this.deps;
    return usdc.ledger.settlementCompanion?.((fee.payload as unknown as ExactEvmPayload).authorization, usdc.nowS()) ?? null;
  }

  /**
   * Uses the fee authorization of an execution whose seller answered below 400; `known`: the
   * purchase as just read or written; `refused`: the ledger refused it in the answer's statement
   * already, so it is settled on its own at once, which says why.
   */
  async settle(intentId: string, known?: Purchase | null, refused = false): Promise<void> {
    const p = known ?? (await this.deps.purchases.read(intentId));
    if (p?.ctx.asset === 'ANM' && this.deps.anm) {
      await takeAnmExecutionFee({ lane: this.deps.anm, host: this.deps.host, purchases: this.deps.purchases, now: () => this.now() }, intentId, p);
      return;
    }
    const ex = p?.ctx.execution;
    if (!p || p.status !== 'EXECUTING' || !ex || ex.seller_status === null || ex.seller_status >= 400 || ex.fee.tx) return;
    if (!refused && (await this.settleFeeInOne(intentId, ex.fee))) return;
    // The leg is this execution's fee: its settlement is recorded without looking its binding up.
    const bound = { intent_id: intentId, leg: 'fee' as const };
    // A settle racing another process's for the same authorization is refused by the ledger
    // (one use per nonce); the execution stays EXECUTING and the next reconcile records it.
    const r = await this.deps.usdc.settle(ex.fee.payload as unknown as ExactEvmPayload, bound).catch((e: unknown) => ({ ok: false as const, transient: true, reason: 'settle_failed', message: String(e) }));
    // A settle whose report was lost earlier (a crash) is recorded now; a fresh one reports itself.
    if (r.ok && r.replay) await this.deps.purchases.legSettled('USDC', legTerms(ex.fee), r.tx, bound);
    if (!r.ok && !('transient' in r && r.transient)) {
      await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, { type: 'leg.failed', id: `failed:fee:${ex.fee.nonce}`, at: this.now(), leg: 'fee', reason: r.reason } satisfies PurchaseEvent);
    }
  }

  /**
   * On a ledger in this database (the simulated one), the fee's settlement rides on the
   * statement that records it (ADR 0052): funds move only if the purchase takes the event, and
   * the event is written only if they moved. False when the ledger cannot, or refused the
   * settlement (nonce used, balance short): the caller settles on its own, which says why.
   */
  private async settleFeeInOne(intentId: string, fee: VerifiedLeg): Promise<boolean> {
    const inOne = this.feeSettlement(fee);
    if (!inOne) return false;
    // The companion settles this very authorization: the transfer is the fee leg's own.
    const { from, to, value } = legTerms(fee);
    const settled = { type: 'leg.settled', id: `settled:fee:${fee.nonce}`, at: this.now(), leg: 'fee', tx: inOne.tx, transfer: { from, to, value } } satisfies PurchaseEvent;
    try {
      // Not applied (recorded already, or the purchase moved on): nothing was settled either.
      await this.deps.host.apply({ kind: PURCHASE_KIND, id: intentId }, settled, inOne.companion);
      return true;
    } catch (err) {
      if (err instanceof CompanionRefusedError) return false;
      // As a settle that failed in transit: the execution stays EXECUTING and the watch retries.
      return true;
    }
  }
}
