/**
 * The facilitator's `exact` on the USDC lane (DESIGN §5 "Facilitator"), checked as the SDK's
 * own exact EVM facilitator checks it (@x402/evm `verifyEIP3009`): the scheme, the EIP-712
 * domain the requirements name (`extra.name`, `extra.version`; missing is
 * `invalid_exact_evm_missing_eip712_domain`), the network, the authorization and its signature
 * over that domain (`asset` as the verifying contract), and only then whether that domain is the
 * lane's token, the one token its ledger holds (issue 20, ADR 0075). A payment signed for USDC
 * never settles against requirements naming another token.
 */
import { getAddress, isAddress } from 'viem';
import type { ExactEvmPayload, EvmDomain } from './lanes/eip3009.ts';
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
 * The domain a payment verified under, against the lane's token. Another contract is a token
 * this ledger does not hold: the SDK's reason for an asset its facilitator cannot settle
 * (ADR 0075); the token's own contract under another name or version is the SDK's diagnosis of
 * a domain the contract would refuse.
 */
function tokenRefusal(d: EvmDomain, lane: UsdcLane): Refusal | null {
  const t = lane.domain;
  if (d.verifyingContract !== t.verifyingContract) {
    return refuse('asset_not_deployed_contract', `this facilitator settles one token on ${lane.network}: ${t.name} at ${t.verifyingContract}; the requirements name asset ${d.verifyingContract}`);
  }
  if (d.name !== t.name) return refuse('invalid_exact_evm_token_name_mismatch', `the token's EIP-712 name is ${JSON.stringify(t.name)}, not ${JSON.stringify(d.name)}`);
  if (d.version !== t.version) return refuse('invalid_exact_evm_token_version_mismatch', `the token's EIP-712 version is ${JSON.stringify(t.version)}, not ${JSON.stringify(d.version)}`);
  return null;
}

/** Everything verify checks; `allowUsedNonce` for settle, which answers a settled nonce with its transaction. */
export async function checkExactEvm(r: FacilitatorRequest, lane: UsdcLane, allowUsedNonce: boolean): Promise<EvmChecked> {
  const { leg, req, requirements } = r;
  if (leg.accepted?.scheme !== 'exact') return refuse('invalid_exact_evm_scheme', 'the payment is not an exact payment (paymentPayload scheme)');
  const domain = requirementsDomain(requirements, lane.token.chainId);
  if ('ok' in domain) return domain;
  if (req.network !== lane.network) return refuse('invalid_exact_evm_network_mismatch', `paymentRequirements.network must be ${lane.network}`);
  if (leg.accepted.network !== req.network) return refuse('invalid_exact_evm_network_mismatch', `the payment is for network ${String(leg.accepted.network)}, the requirements for ${req.network}`);
  const other = tokenRefusal(domain, lane);
  // The lane's own domain object keeps its separator cached (eip3009.ts transferDigest).
  const signed = await lane.checkPayload(leg.payload, { payTo: req.payTo, amount: req.amount }, other ? domain : lane.domain);
  if (!signed.ok) return signed;
  if (other) return { ...other, payer: signed.payer };
  const [c] = await lane.checkLedger([{ payer: signed.payer, payload: signed.payload, amount: req.amount, allowUsedNonce }]);
  return c!.ok ? { ok: true, payer: c!.payer, payload: c!.payload } : { ok: false, reason: c!.reason, message: c!.message };
}
