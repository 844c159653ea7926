/**
 * The facilitator's `exact` on the USDC lane (DESIGN §5 "Facilitator"), checked as the SDK's
 * own exact EVM facilitators check it, in their order (@x402/evm `verifyEIP3009` for v2,
 * `ExactEvmSchemeV1` for v1), so a payment with several faults gets the SDK's reason: the
 * scheme; in v1 the payment's network; the EIP-712 domain the requirements name (`extra.name`,
 * `extra.version`); the networks; the signature over that domain (`asset` as the verifying
 * contract), recipient, validBefore, validAfter, value (eip3009.ts); then whether the asset is
 * the lane's token, the one token its ledger holds (issue 20, ADR 0075); the nonce; the
 * token's EIP-712 name and version; the balance. A payment signed for USDC never settles
 * against requirements naming another token. Reasons are v2's here; facilitator.ts words
 * them for v1 (ADR 0083).
 */
import { getAddress, isAddress } from 'viem';
import { asExactEvmPayload, type ExactEvmPayload, type EvmDomain } from './lanes/eip3009.ts';
import type { UsdcLane } from './lanes/usdc-lane.ts';
import { refuse, type FacilitatorRequest, type Refusal } from './facilitator-request.ts';

export type EvmChecked = { ok: true; payer: string; payload: ExactEvmPayload } | Refusal;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The EIP-712 domain the requirements name, or why they name none. */
function requirementsDomain(r: Record<string, unknown>, chainId: number): EvmDomain | Refusal {
  const extra = isObject(r.extra) ? r.extra : {};
  if (!nonEmpty(extra.name) || !nonEmpty(extra.version)) {
    return refuse('invalid_exact_evm_missing_eip712_domain', `paymentRequirements.extra.name and extra.version (the EIP-712 domain of asset ${String(r.asset)}) are required`);
  }
  if (typeof r.asset !== 'string' || !isAddress(r.asset, { strict: false })) return refuse('invalid_payment_requirements', 'paymentRequirements.asset must be the token contract address');
  return { name: extra.name, version: extra.version, chainId, verifyingContract: getAddress(r.asset) };
}

/**
 * Whether the domain a payment verified under is the lane's token. Another contract is a token
 * this ledger does not hold: the SDK's reason for an asset its facilitator cannot settle
 * (ADR 0075), read after the authorization as the SDK reads it. The token's own contract under
 * another name or version is the SDK's diagnosis of a domain the contract would refuse, which
 * it makes after the nonce (`diagnoseEip3009SimulationFailure`).
 */
function assetRefusal(d: EvmDomain, lane: UsdcLane): Refusal | null {
  const t = lane.domain;
  if (d.verifyingContract === t.verifyingContract) return null;
  return refuse('asset_not_deployed_contract', `this facilitator settles one token on ${lane.network}: ${t.name} at ${t.verifyingContract}; the requirements name asset ${d.verifyingContract}`);
}

function domainRefusal(d: EvmDomain, lane: UsdcLane): Refusal | null {
  const t = lane.domain;
  if (d.name !== t.name) return refuse('invalid_exact_evm_token_name_mismatch', `the token's EIP-712 name is ${JSON.stringify(t.name)}, not ${JSON.stringify(d.name)}`);
  if (d.version !== t.version) return refuse('invalid_exact_evm_token_version_mismatch', `the token's EIP-712 version is ${JSON.stringify(t.version)}, not ${JSON.stringify(d.version)}`);
  return null;
}

const NONCE_USED = 'invalid_exact_evm_nonce_already_used';

/**
 * Everything verify checks, in the SDK's order for the payment's version (the file comment;
 * v1 reads the payment's network first, as `ExactEvmSchemeV1` derives its chain from it).
 * Every refusal after the payload is read names its payer, as the SDK's do.
 * `allowUsedNonce` for settle, which answers a settled nonce with its transaction.
 */
export async function checkExactEvm(r: FacilitatorRequest, lane: UsdcLane, allowUsedNonce: boolean): Promise<EvmChecked> {
  const { leg, req, requirements } = r;
  const payload = asExactEvmPayload(leg.payload);
  if (!payload) return refuse('invalid_payload', 'paymentPayload.payload is not an EIP-3009 authorization with its signature');
  const payer = payload.authorization.from.toLowerCase();
  const refused = (x: Refusal): Refusal => ({ ...x, payer });
  if (leg.accepted?.scheme !== 'exact') return refused(refuse('invalid_exact_evm_scheme', 'the payment is not an exact payment (paymentPayload scheme)'));
  const paymentNetwork = refuse('invalid_exact_evm_network_mismatch', `the payment is for network ${r.network}, the requirements for ${req.network}`);
  if (leg.x402Version === 1 && leg.accepted.network !== lane.network) return refused({ ...paymentNetwork, message: `the payment is for network ${r.network}; this facilitator settles ${lane.network}` });
  const domain = requirementsDomain(requirements, lane.token.chainId);
  if ('ok' in domain) return refused(domain);
  if (req.network !== lane.network) return refused(refuse('invalid_exact_evm_network_mismatch', `paymentRequirements.network must be ${lane.network}`));
  if (leg.accepted.network !== req.network) return refused(paymentNetwork);
  const t = lane.domain;
  const own = domain.verifyingContract === t.verifyingContract && domain.name === t.name && domain.version === t.version;
  // The lane's own domain object keeps its separator cached (eip3009.ts transferDigest).
  const signed = await lane.checkPayload(payload, { payTo: req.payTo, amount: req.amount }, own ? t : domain);
  if (!signed.ok) return refused(signed);
  const asset = assetRefusal(domain, lane);
  if (asset) return refused(asset);
  const [c] = await lane.checkLedger([{ payer: signed.payer, payload: signed.payload, amount: req.amount, allowUsedNonce }]);
  if (!c!.ok && c!.reason === NONCE_USED) return refused(c!);
  const named = own ? null : domainRefusal(domain, lane);
  if (named) return refused(named);
  return c!.ok ? { ok: true, payer: c!.payer, payload: c!.payload } : refused(c!);
}
