/**
 * The facilitator's `exact-anm` on `native:1` (DESIGN §5 "Facilitator"): verify checks the
 * signed transfer against the requirements and the node; settle submits it and waits for its
 * receipt (the x402 meaning of settled: the transfer is in a block). Idempotent per transfer:
 * settling one the node already has answers its hash and its receipt, never a second transfer.
 * A transfer at a nonce held by an open marketplace purchase (ADR 0043) is refused unless it is
 * the transfer that purchase recorded.
 */
import { MARKET_LANES } from '../../machines/money/market.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import type { CheckedTransfer } from './lanes/anm-leg.ts';
import { NONCE_HELD } from './anm-nonce-holds.ts';
import type { FacilitatorRequest } from './facilitator-request.ts';
import type { SettleResponse, VerifyResponse } from './facilitator.ts';

const NETWORK = MARKET_LANES.ANM.network;
export const ANM_KIND = { x402Version: 2, scheme: MARKET_LANES.ANM.legScheme, network: NETWORK } as const;

type Checked = { ok: true; transfer: CheckedTransfer } | { ok: false; reason: string; message: string; payer?: string };

export class AnmFacilitator {
  constructor(private readonly lane: AnmLane) {}

  private async check({ req, leg }: FacilitatorRequest, allowSubmitted: boolean): Promise<Checked> {
    if (req.network !== NETWORK) return { ok: false, reason: 'invalid_exact_anm_network_mismatch', message: `network must be ${NETWORK} (never eip155:1)` };
    const c = await this.lane.verify(leg.accepted, leg.payload, { scheme: ANM_KIND.scheme, payTo: req.payTo, amount: req.amount, reference: req.reference }, { allowSubmitted });
    if (!c.ok || c.known) return c;
    // A transfer at a nonce an open purchase holds would take a waiting fee transfer's place (ADR 0043).
    const { payer, tx, hash } = c.transfer;
    const held = await this.lane.holds.heldAgainst(payer, tx.nonce, hash);
    return held ? { ok: false, reason: NONCE_HELD, message: held, payer } : c;
  }

  async verify(r: FacilitatorRequest): Promise<VerifyResponse> {
    const c = await this.check(r, false);
    return c.ok ? { isValid: true, payer: c.transfer.payer } : { isValid: false, invalidReason: c.reason, invalidMessage: c.message, ...(c.payer && { payer: c.payer }) };
  }

  async settle(r: FacilitatorRequest): Promise<SettleResponse> {
    const c = await this.check(r, true);
    // The network the payment names, as the SDK answers (ADR 0083); verified, it is NETWORK.
    const network = r.network;
    const failed = (reason: string, message: string, payer?: string): SettleResponse => ({ success: false, errorReason: reason, errorMessage: message, ...(payer && { payer }), transaction: '', network });
    if (!c.ok) return failed(c.reason, c.message, c.payer);
    const { payer } = c.transfer;
    const sent = await this.lane.settle(c.transfer);
    if (!sent.ok) return failed(sent.reason, sent.message, payer);
    const receipt = await this.lane.waitIncluded(sent.tx);
    if (!receipt) return failed('invalid_exact_anm_not_included', 'the transfer was submitted but is not in a block yet; settle again to learn its fate', payer);
    if (receipt.status !== 'success') return failed('invalid_exact_anm_transaction_failed', `the transfer failed on the chain: ${receipt.error ?? 'failed'}`, payer);
    return { success: true, payer, transaction: sent.tx, network };
  }
}
