/**
 * The buyer's `exact-anm` scheme for `@x402/core`'s x402Client: one signed ANM transfer of
 * exactly `amount` to `payTo` (with `extra.reference` when the requirements name one),
 * paying its own chain fee: `client.register('native:1', new ExactAnmScheme(wallet))`.
 * Typed structurally, so the project does not depend on the SDK at run time.
 */
import { MARKET_LANES } from '../../../machines/money/market.ts';
import { findAnmAsset, signTransfer, type AnmWallet } from './anm-wallet.ts';

export interface AnmRequirements {
  scheme: string;
  network: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

export class ExactAnmScheme {
  readonly scheme = MARKET_LANES.ANM.legScheme;
  readonly findDefaultAsset = findAnmAsset;

  constructor(
    private readonly wallet: AnmWallet,
    private readonly clock: () => number = Date.now,
  ) {}

  async createPaymentPayload(x402Version: number, r: AnmRequirements): Promise<{ x402Version: number; payload: Record<string, unknown> }> {
    const reference = typeof r.extra?.reference === 'string' ? r.extra.reference : '';
    const { hex } = signTransfer(this.wallet, { to: r.payTo, amount: BigInt(r.amount), reference, nonce: await this.wallet.nextNonce() });
    const validBefore = String(Math.floor(this.clock() / 1000) + Math.max(60, r.maxTimeoutSeconds));
    return { x402Version, payload: { transaction: hex, validBefore } };
  }
}
