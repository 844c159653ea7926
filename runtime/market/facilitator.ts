/**
 * The x402 facilitator API for the marketplace's lanes (DESIGN §5 "Facilitator"), in the
 * SDK's shapes (`@x402/core` VerifyRequest/VerifyResponse/SettleResponse/SupportedResponse)
 * and reason codes, so a seller running stock `@x402/express` can settle through us.
 * Settlement is idempotent per nonce: the same authorization settles once and is then
 * answered with its transaction.
 */
import type { ExactEvmPayload } from './lanes/eip3009.ts';
import type { UsdcLane } from './lanes/usdc-lane.ts';
import { decodeLeg } from './leg-codec.ts';
import type { AnmLane } from './lanes/anm-lane.ts';
import { AnmFacilitator, ANM_KIND } from './facilitator-anm.ts';
import { fromV1Network, v1NetworkName } from './requirements.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface Requirement {
  scheme: string;
  network: string;
  payTo: string;
  amount: bigint;
  /** `exact-anm`: the reference the transfer must carry, when the seller names one. */
  reference?: string | undefined;
}

/** v2 requirements carry `amount` and CAIP-2 networks; v1 carries `maxAmountRequired` and `base`. */
export function requirementOf(r: unknown): Requirement | null {
  if (!isObject(r) || typeof r.scheme !== 'string' || typeof r.payTo !== 'string') return null;
  const amount = typeof r.amount === 'string' ? r.amount : r.maxAmountRequired;
  if (typeof amount !== 'string' || !/^[0-9]{1,78}$/.test(amount)) return null;
  const network = fromV1Network(r.network);
  const reference = isObject(r.extra) && typeof r.extra.reference === 'string' ? r.extra.reference : undefined;
  return typeof network === 'string' ? { scheme: r.scheme, network, payTo: r.payTo, amount: BigInt(amount), reference } : null;
}

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

export class Facilitator {
  private readonly anm: AnmFacilitator | null;

  constructor(
    private readonly usdc: UsdcLane,
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

  /** The `exact-anm` lane, when the body names it and a node is connected. */
  private anmFor(body: unknown): AnmFacilitator | null {
    const req = isObject(body) ? body.paymentRequirements : undefined;
    return this.anm && isObject(req) && req.scheme === ANM_KIND.scheme ? this.anm : null;
  }

  private async check(body: unknown, allowUsedNonce: boolean): Promise<{ ok: true; payer: string; payload: ExactEvmPayload } | { ok: false; reason: string; message: string; payer?: string }> {
    if (!isObject(body)) return { ok: false, reason: 'invalid_payload', message: 'the body must be a JSON object' };
    const req = requirementOf(body.paymentRequirements);
    const leg = decodeLeg(body.paymentPayload, this.usdc.token);
    if (!req || !leg) return { ok: false, reason: 'invalid_payload', message: 'paymentPayload and paymentRequirements are required' };
    if (req.scheme !== 'exact' || leg.accepted?.scheme !== 'exact') return { ok: false, reason: 'unsupported_scheme', message: `only exact on ${this.usdc.network} is served` };
    if (req.network !== this.usdc.network) return { ok: false, reason: 'invalid_exact_evm_network_mismatch', message: `network must be ${this.usdc.network}` };
    const c = await this.usdc.verify(leg.accepted, leg.payload, { payTo: req.payTo, amount: req.amount }, { allowUsedNonce });
    return c.ok ? { ok: true, payer: c.payer, payload: c.payload } : c;
  }

  async verify(body: unknown): Promise<VerifyResponse> {
    const anm = this.anmFor(body);
    if (anm) return anm.verify(body as Record<string, unknown>);
    const c = await this.check(body, false);
    return c.ok ? { isValid: true, payer: c.payer } : { isValid: false, invalidReason: c.reason, invalidMessage: c.message, ...(c.payer ? { payer: c.payer } : {}) };
  }

  async settle(body: unknown): Promise<SettleResponse> {
    const anm = this.anmFor(body);
    if (anm) return anm.settle(body as Record<string, unknown>);
    const c = await this.check(body, true);
    if (!c.ok) return { success: false, errorReason: c.reason, errorMessage: c.message, transaction: '', network: this.usdc.network };
    const r = await this.usdc.settle(c.payload);
    return r.ok
      ? { success: true, payer: c.payer, transaction: r.tx, network: this.usdc.network }
      : { success: false, errorReason: r.reason, ...(r.message ? { errorMessage: r.message } : {}), payer: c.payer, transaction: '', network: this.usdc.network };
  }
}
