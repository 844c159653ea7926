/**
 * The buyer's `exact-split` scheme for `@x402/core`'s x402Client (DESIGN §5 "Lanes"):
 * `client.register('eip155:8453', new ExactSplitEvmScheme(account))`. From a quote's
 * requirements it signs the two EIP-3009 authorizations `extra.legs` names, each a complete
 * `exact` payment, with nonces bound to the intent (keccak256(intent_id ‖ leg ‖ random)).
 * The payload's `legs` is what `POST /api/v1/purchase` takes as `payment.legs`. The EIP-712
 * domain is the requirements' as the SDK's `exact` scheme reads it: `asset` the token,
 * `extra.name`/`extra.version`, and the chain id of the CAIP-2 network.
 * Typed structurally, so the project does not depend on the SDK at run time.
 */
import { randomBytes } from 'node:crypto';
import { getAddress, keccak256, toHex, type LocalAccount } from 'viem';
import { domainOf, TRANSFER_TYPES } from '../lanes/eip3009.ts';
import type { UsdcToken } from '../lanes/usdc-ledger.ts';
import { legRequirement } from '../requirements.ts';
import { MARKET_LANES, USDC_TOKEN } from '../../../machines/money/market.ts';

/** A viem local account (`privateKeyToAccount`) or anything with its address and signTypedData. */
export type EvmSigner = Pick<LocalAccount, 'address' | 'signTypedData'>;

interface SplitRequirements {
  scheme: string;
  network: string;
  asset?: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

interface Leg {
  payTo: string;
  amount: string;
}

function legsOf(extra: Record<string, unknown>): { seller: Leg; fee: Leg; intent: string } {
  const legs = extra.legs as { seller?: Leg; fee?: Leg } | undefined;
  const intent = extra.intent_id;
  if (!legs?.seller || !legs.fee || typeof intent !== 'string') throw new Error('exact-split requirements need extra.legs.seller, extra.legs.fee and extra.intent_id');
  return { seller: legs.seller, fee: legs.fee, intent };
}

/** The token the requirements name; USDC on Base for whatever they leave out. */
function tokenOf(r: SplitRequirements): UsdcToken {
  const chain = /^eip155:([0-9]{1,15})$/.exec(r.network);
  if (!chain?.[1]) throw new Error(`exact-split needs an eip155 network, not ${r.network}`);
  const text = (v: unknown, d: string): string => (typeof v === 'string' && v ? v : d);
  return { address: text(r.asset, USDC_TOKEN.address), name: text(r.extra.name, USDC_TOKEN.name), version: text(r.extra.version, USDC_TOKEN.version), chainId: Number(chain[1]) };
}

export class ExactSplitEvmScheme {
  readonly scheme = 'exact-split';

  /** USDC on Base, so the SDK's spend controls know the asset and its decimals. */
  readonly findDefaultAsset = (asset: string, network: string): { asset: string; decimals: number; symbol: string } | undefined =>
    network === MARKET_LANES.USDC.network && asset.toLowerCase() === USDC_TOKEN.address.toLowerCase() ? { asset: USDC_TOKEN.address, decimals: 6, symbol: 'USDC' } : undefined;

  /**
   * `entropy`: each nonce's random part, 16 bytes as hex; fixed only to reproduce the test
   * vector in docs/marketplace.md.
   */
  constructor(
    private readonly signer: EvmSigner,
    private readonly clock: () => number = Date.now,
    private readonly entropy: () => string = () => randomBytes(16).toString('hex'),
  ) {}

  private async leg(token: UsdcToken, intent: string, name: 'seller' | 'fee', leg: Leg, timeoutS: number) {
    const now = Math.floor(this.clock() / 1000);
    const authorization = {
      from: getAddress(this.signer.address),
      to: getAddress(leg.payTo),
      value: leg.amount,
      validAfter: String(now - 60),
      validBefore: String(now + timeoutS),
      nonce: keccak256(toHex(`${intent}|${name}|${this.entropy()}`)),
    };
    const signature = await this.signer.signTypedData({
      domain: domainOf(token),
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
    });
    return { x402Version: 2, accepted: legRequirement('USDC', leg.payTo, BigInt(leg.amount), timeoutS, token), payload: { signature, authorization } };
  }

  async createPaymentPayload(x402Version: number, requirements: SplitRequirements): Promise<{ x402Version: number; payload: Record<string, unknown> }> {
    const { seller, fee, intent } = legsOf(requirements.extra);
    const token = tokenOf(requirements);
    // The seller leg lives as long as the seller takes a payment for (the marketplace refuses a longer one, ADR 0091);
    // the fee leg at least a minute and never less than the seller's, since it settles after it.
    const timeoutS = requirements.maxTimeoutSeconds;
    return {
      x402Version,
      payload: { intent_id: intent, legs: { seller: await this.leg(token, intent, 'seller', seller, timeoutS), fee: await this.leg(token, intent, 'fee', fee, Math.max(60, timeoutS)) } },
    };
  }
}
