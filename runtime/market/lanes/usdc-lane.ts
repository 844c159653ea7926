/**
 * The USDC lane behind one port: verify a signed `exact` leg against what is expected, and
 * settle it on the ledger. Every settlement is reported to `onSettled`, so the purchase
 * whose seller leg this was learns it was paid, whoever settled it.
 */
import { asExactEvmPayload, checkAccepted, checkAuthorization, USDC_EXPECTED_BASE, type Authorization, type Check, type ExactEvmPayload } from './eip3009.ts';
import type { SettleResult, UsdcSimLedger } from './usdc-sim.ts';

export interface LegExpectation {
  payTo: string;
  amount: bigint;
}

export type LegCheck = (Check & { ok: false }) | { ok: true; payer: string; payload: ExactEvmPayload };

export type SettledListener = (authorizer: string, nonce: string, tx: string) => Promise<void>;

export class UsdcLane {
  private readonly listeners: SettledListener[] = [];

  constructor(
    readonly ledger: UsdcSimLedger,
    private readonly clock: () => number = Date.now,
  ) {}

  onSettled(fn: SettledListener): void {
    this.listeners.push(fn);
  }

  nowS(): number {
    return Math.floor(this.clock() / 1000);
  }

  /** Requirements, authorization, signature, then the ledger: nonce unused and balance enough. */
  async verify(accepted: Record<string, unknown> | undefined, rawPayload: unknown, e: LegExpectation, opts: { allowUsedNonce?: boolean } = {}): Promise<LegCheck> {
    const expected = { ...USDC_EXPECTED_BASE, payTo: e.payTo, amount: e.amount };
    const accept = checkAccepted(accepted, expected);
    if (accept && !accept.ok) return accept;
    const payload = asExactEvmPayload(rawPayload);
    if (!payload) return { ok: false, reason: 'invalid_payload', message: 'payload is not an EIP-3009 authorization with its signature' };
    const auth = await checkAuthorization(payload, expected, this.nowS());
    if (!auth.ok) return auth;
    const used = await this.ledger.authorizationState(auth.payer, payload.authorization.nonce);
    if (used && !opts.allowUsedNonce) return { ok: false, reason: 'invalid_exact_evm_nonce_already_used', message: 'this authorization nonce was already used' };
    // A used nonce being settled again is answered from the ledger (idempotent), not re-funded.
    if (!used && (await this.ledger.balanceOf(auth.payer)) < e.amount) {
      return { ok: false, reason: 'invalid_exact_evm_insufficient_balance', message: 'the payer balance is below the amount' };
    }
    return { ok: true, payer: auth.payer, payload };
  }

  async settle(a: Authorization): Promise<SettleResult> {
    const r = await this.ledger.transferWithAuthorization(a, this.nowS());
    if (r.ok && !r.replay) for (const fn of this.listeners) await fn(a.from.toLowerCase(), a.nonce.toLowerCase(), r.tx);
    return r;
  }
}
