/**
 * The buyer's `exact-anm-split` scheme for `@x402/core`'s x402Client (DESIGN §5 "Lanes"):
 * `client.register('native:1', new ExactAnmSplitScheme(wallet))`. From a quote's requirements
 * it signs the two transfers `extra.legs` names, each a complete `exact-anm` payment carrying
 * its reference `mp1:<intent>:<leg>`: the seller leg with the wallet's next nonce, the fee
 * leg with the one after, so the chain can only ever include the fee after the seller's
 * transfer. The payload's `legs` is what `POST /api/v1/purchase` takes as `payment.legs`.
 */
import { MARKET_LANES } from '../../../machines/money/market.ts';
import { legReference } from '../lanes/anm-leg.ts';
import { legRequirement } from '../requirements.ts';
import { findAnmAsset, signTransfer, type AnmWallet } from './anm-wallet.ts';
import type { AnmRequirements } from './exact-anm.ts';

interface Leg {
  payTo: string;
  amount: string;
  reference?: string;
}

function legsOf(extra: Record<string, unknown> | undefined): { seller: Leg; fee: Leg; intent: string } {
  const legs = extra?.legs as { seller?: Leg; fee?: Leg } | undefined;
  const intent = extra?.intent_id;
  if (!legs?.seller || !legs.fee || typeof intent !== 'string') throw new Error('exact-anm-split requirements need extra.legs.seller, extra.legs.fee and extra.intent_id');
  return { seller: legs.seller, fee: legs.fee, intent };
}

export class ExactAnmSplitScheme {
  readonly scheme = MARKET_LANES.ANM.scheme;
  readonly findDefaultAsset = findAnmAsset;

  constructor(
    private readonly wallet: AnmWallet,
    private readonly clock: () => number = Date.now,
  ) {}

  async createPaymentPayload(x402Version: number, r: AnmRequirements): Promise<{ x402Version: number; payload: Record<string, unknown> }> {
    const { seller, fee, intent } = legsOf(r.extra);
    // The seller leg's bound is the seller's own timeout (ADR 0091); the fee's at least a minute and never before the seller's.
    const nowS = Math.floor(this.clock() / 1000);
    const timeoutS = { seller: r.maxTimeoutSeconds, fee: Math.max(60, r.maxTimeoutSeconds) };
    const nonce = await this.wallet.nextNonce();
    const leg = (name: 'seller' | 'fee', l: Leg, n: bigint) => {
      const reference = l.reference ?? legReference(intent, name);
      const { hex } = signTransfer(this.wallet, { to: l.payTo, amount: BigInt(l.amount), reference, nonce: n });
      const accepted = legRequirement('ANM', l.payTo, BigInt(l.amount), timeoutS[name]);
      return { x402Version: 2, accepted: { ...accepted, extra: { ...accepted.extra, reference } }, payload: { transaction: hex, validBefore: String(nowS + timeoutS[name]) } };
    };
    return { x402Version, payload: { intent_id: intent, legs: { seller: leg('seller', seller, nonce), fee: leg('fee', fee, nonce + 1n) } } };
  }
}
