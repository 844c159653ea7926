/**
 * A facilitator request as the SDK's HTTPFacilitatorClient sends it (`{x402Version,
 * paymentPayload, paymentRequirements}`), each part refused with the x402 reason that names
 * what is wrong (x402's ErrorReasons: `invalid_x402_version`, `invalid_payload`,
 * `invalid_payment_requirements`) and a message that says which field, so a seller can tell a
 * bad payment from a bad request of its own (issue 20).
 */
import type { UsdcToken } from './lanes/usdc-ledger.ts';
import { decodeLeg, fromBase64Json, type DecodedLeg } from './leg-codec.ts';
import { fromV1Network } from './requirements.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface Requirement {
  scheme: string;
  network: string;
  payTo: string;
  amount: bigint;
  /** `exact-anm`: the reference the transfer must carry, when the seller names one. */
  reference?: string | undefined;
}

/** A check's refusal, in the SDK's reason codes. */
export interface Refusal {
  ok: false;
  reason: string;
  message: string;
  payer?: string | undefined;
}

export const refuse = (reason: string, message: string): Refusal => ({ ok: false, reason, message });

/** v2 requirements carry `amount` and CAIP-2 networks; v1 carries `maxAmountRequired` and `base`. */
export function requirementOf(r: unknown): Requirement | Refusal {
  const bad = (field: string, what: string) => refuse('invalid_payment_requirements', `paymentRequirements.${field} ${what}`);
  if (!isObject(r)) return refuse('invalid_payment_requirements', 'paymentRequirements must be an object (the requirements the payment is for)');
  if (typeof r.scheme !== 'string') return bad('scheme', 'is required');
  const network = fromV1Network(r.network);
  if (typeof network !== 'string') return bad('network', 'is required');
  if (typeof r.payTo !== 'string') return bad('payTo', 'is required');
  const field = 'amount' in r ? 'amount' : 'maxAmountRequired';
  const amount = r[field];
  if (typeof amount !== 'string' || !/^[0-9]{1,78}$/.test(amount)) return bad(field === 'amount' ? 'amount' : 'maxAmountRequired (x402 v1) or amount', 'must be a whole number of atomic units, as a string');
  const reference = isObject(r.extra) && typeof r.extra.reference === 'string' ? r.extra.reference : undefined;
  return { scheme: r.scheme, network, payTo: r.payTo, amount: BigInt(amount), reference };
}

export interface FacilitatorRequest {
  ok: true;
  leg: DecodedLeg;
  /** The requirements as sent: the EVM checks read `asset` and `extra` from them. */
  requirements: Record<string, unknown>;
  req: Requirement;
  /**
   * The network the payment names, as it is written: `base` in v1, CAIP-2 in v2. Answers name
   * it, as the SDK's facilitators of each version do, and x402 1.x's SettleResponse allows
   * only its own network names there.
   */
  network: string;
}

const VERSIONS = [1, 2];
const badVersion = (v: unknown, where: string) => refuse('invalid_x402_version', `${where} ${JSON.stringify(v)} is not served: this facilitator speaks x402 versions 1 and 2`);

/**
 * The body's parts in the order a reader needs them: the version, the payment (an object or
 * its base64 header value), then the requirements. `token`: the USDC lane's, which a v1
 * payload (naming no asset) is read as.
 */
export function readRequest(body: unknown, token: UsdcToken): FacilitatorRequest | Refusal {
  if (!isObject(body)) return refuse('invalid_payload', 'the body must be a JSON object with x402Version, paymentPayload and paymentRequirements');
  if (body.x402Version !== undefined && !VERSIONS.includes(body.x402Version as number)) return badVersion(body.x402Version, 'x402Version');
  if (body.paymentPayload === undefined) return refuse('invalid_payload', 'paymentPayload is required');
  const raw = typeof body.paymentPayload === 'string' ? fromBase64Json(body.paymentPayload) : body.paymentPayload;
  if (!isObject(raw)) return refuse('invalid_payload', 'paymentPayload must be an x402 PaymentPayload: a JSON object, or its base64 header value');
  if (!VERSIONS.includes(raw.x402Version as number)) return badVersion(raw.x402Version, 'paymentPayload.x402Version');
  if (body.x402Version !== undefined && body.x402Version !== raw.x402Version) return refuse('invalid_x402_version', `x402Version ${JSON.stringify(body.x402Version)} is not the paymentPayload's x402Version ${JSON.stringify(raw.x402Version)}`);
  const leg = decodeLeg(raw, token);
  if (!leg) return refuse('invalid_payload', raw.x402Version === 2 ? 'paymentPayload.accepted (the requirements paid for) is required in x402 v2' : 'paymentPayload.scheme is required in x402 v1');
  if (body.paymentRequirements === undefined) return refuse('invalid_payment_requirements', 'paymentRequirements is required');
  const req = requirementOf(body.paymentRequirements);
  if ('ok' in req) return req;
  const named = paymentNetwork(raw);
  return { ok: true, leg, requirements: body.paymentRequirements as Record<string, unknown>, req, network: typeof named === 'string' ? named : req.network };
}

const paymentNetwork = (p: Record<string, unknown>): unknown => (p.x402Version === 1 ? p.network : isObject(p.accepted) ? p.accepted.network : undefined);

/**
 * The network to answer a request `readRequest` refused with: the payment's, else the
 * requirements', as written; undefined when the body names neither.
 */
export function requestNetwork(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const raw = typeof body.paymentPayload === 'string' ? fromBase64Json(body.paymentPayload) : body.paymentPayload;
  const named = isObject(raw) ? paymentNetwork(raw) : undefined;
  if (typeof named === 'string') return named;
  const r = body.paymentRequirements;
  return isObject(r) && typeof r.network === 'string' ? r.network : undefined;
}
