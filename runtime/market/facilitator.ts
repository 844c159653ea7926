/**
 * The x402 facilitator API for the marketplace's lanes (DESIGN §5 "Facilitator"), in the
 * SDK's shapes (`@x402/core` VerifyRequest/VerifyResponse/SettleResponse/SupportedResponse)
 * and reason codes, so a seller running stock `@x402/express` can settle through us.
 * Each version is answered as the SDK's facilitator for it answers (ADR 0083): the network the
 * payment names (`base` in v1), v1's reason codes for v1, and the payer on every refusal
 * that can name one. Settlement is idempotent per nonce: the same authorization settles once
 * and is then answered with its transaction. A purchase's fee leg is not settled here: it is
 * the marketplace's to use once the seller leg has settled (ADR 0092); seller legs are.
 */
import type { UsdcLane } from './lanes/usdc-lane.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import { AnmFacilitator, ANM_KIND } from './facilitator-anm.ts';
import { checkExactEvm, type EvmChecked } from './facilitator-evm.ts';
import type { Queryable } from '../../storage/db.ts';
import { feeLegBinding } from './leg-nonces.ts';
import { readRequest, refuse, requestNetwork, type FacilitatorRequest, type Refusal } from './facilitator-request.ts';
import { v1NetworkName } from './requirements.ts';

export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
}

/**
 * The reasons @x402/evm's v1 exact facilitator (`ExactEvmSchemeV1`) words otherwise than its
 * v2 one. v1 has no asset check: a token the chain cannot settle fails its simulation, and the
 * diagnosis of a contract without EIP-3009 is `invalid_exact_evm_eip3009_not_supported`.
 */
const V1_REASONS: Readonly<Record<string, string>> = {
  invalid_exact_evm_payload_authorization_value_mismatch: 'invalid_exact_evm_authorization_value',
  asset_not_deployed_contract: 'invalid_exact_evm_eip3009_not_supported',
};

const reasonFor = (version: number, reason: string): string => (version === 1 ? (V1_REASONS[reason] ?? reason) : reason);
const payerOf = (payer: string | undefined) => (payer ? { payer } : {});

/**
 * The SDK's reason for a nonce the payment cannot use, as a purchase replaying another's leg is
 * refused (leg-nonces.ts): the nonce is spoken for by a purchase's fee leg (ADR 0092).
 */
const FEE_LEG = 'invalid_exact_evm_nonce_already_used';

export class Facilitator {
  private readonly anm: AnmFacilitator | null;

  constructor(
    private readonly usdc: UsdcLane,
    private readonly db: Queryable,
    anm?: AnmLane,
  ) {
    this.anm = anm ? new AnmFacilitator(anm) : null;
  }

  /**
   * `extra` names the lane's token and EIP-712 domain (the SDK's schema allows it on a kind),
   * so a seller can see which token this facilitator settles before pricing in it.
   */
  supported() {
    const t = this.usdc.token;
    const extra = { asset: t.address, name: t.name, version: t.version, chainId: t.chainId };
    const v1 = v1NetworkName(t);
    return {
      kinds: [
        { x402Version: 2, scheme: 'exact', network: this.usdc.network, extra },
        ...(v1 ? [{ x402Version: 1, scheme: 'exact', network: v1, extra }] : []),
        ...(this.anm ? [ANM_KIND] : []),
      ],
      extensions: [],
      signers: { 'eip155:*': [...this.usdc.ledger.signers], ...(this.anm && { 'native:*': [] as string[] }) },
    };
  }

  /**
   * The lane the requirements' scheme names, or why none: as the SDK's facilitator, a scheme
   * and network it has no scheme registered for is `unsupported_scheme`.
   */
  private route(body: unknown): { lane: 'exact'; r: FacilitatorRequest } | { lane: 'anm'; r: FacilitatorRequest; anm: AnmFacilitator } | Refusal {
    const r = readRequest(body, this.usdc.token);
    if (!r.ok) return r;
    if (r.req.scheme === 'exact') return { lane: 'exact', r };
    if (r.req.scheme === ANM_KIND.scheme && this.anm) return { lane: 'anm', r, anm: this.anm };
    return refuse('unsupported_scheme', `no ${r.req.scheme} on ${r.req.network} here (GET /facilitator/supported lists the kinds served)`);
  }

  /** The network a refused request is answered with: the one it names, else the lane's in the body's version. */
  private refusedNetwork(body: unknown): string {
    const v1 = (body as { x402Version?: unknown } | null)?.x402Version === 1 ? v1NetworkName(this.usdc.token) : undefined;
    return requestNetwork(body) ?? v1 ?? this.usdc.network;
  }

  /**
   * The exact checks, then whether the authorization is a purchase's fee leg: settled here
   * before its seller leg, the fee would be taken from a buyer whose seller may never be paid
   * (DESIGN §5 "The fee is taken only if the seller is paid"). After them, so a forged or
   * malformed payment is refused for what is wrong with it.
   */
  private async checkExact(r: FacilitatorRequest, allowUsedNonce: boolean): Promise<EvmChecked> {
    const c = await checkExactEvm(r, this.usdc, allowUsedNonce);
    if (!c.ok) return c;
    const intent = await feeLegBinding(this.db, 'USDC', c.payer, c.payload.authorization.nonce);
    if (!intent) return c;
    return { ...refuse(FEE_LEG, `this authorization is the fee leg of marketplace purchase ${intent}: the marketplace settles it once that purchase's seller leg has settled`), payer: c.payer };
  }

  async verify(body: unknown): Promise<VerifyResponse> {
    const to = this.route(body);
    if ('ok' in to) return { isValid: false, invalidReason: to.reason, invalidMessage: to.message };
    if (to.lane === 'anm') return to.anm.verify(to.r);
    const c = await this.checkExact(to.r, false);
    if (c.ok) return { isValid: true, payer: c.payer };
    return { isValid: false, invalidReason: reasonFor(to.r.leg.x402Version, c.reason), invalidMessage: c.message, ...payerOf(c.payer) };
  }

  async settle(body: unknown): Promise<SettleResponse> {
    const to = this.route(body);
    if ('ok' in to) return { success: false, errorReason: to.reason, errorMessage: to.message, transaction: '', network: this.refusedNetwork(body) };
    if (to.lane === 'anm') return to.anm.settle(to.r);
    const { network, leg } = to.r;
    const c = await this.checkExact(to.r, true);
    if (!c.ok) return { success: false, errorReason: reasonFor(leg.x402Version, c.reason), errorMessage: c.message, ...payerOf(c.payer), transaction: '', network };
    const r = await this.usdc.settle(c.payload);
    return r.ok
      ? { success: true, payer: c.payer, transaction: r.tx, network }
      : { success: false, errorReason: reasonFor(leg.x402Version, r.reason), ...(r.message ? { errorMessage: r.message } : {}), payer: c.payer, transaction: '', network };
  }
}
