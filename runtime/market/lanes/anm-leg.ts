/**
 * One `exact-anm` leg (DESIGN §5 "Legs"): an ordinary signed ANM transfer, carried as the hex
 * wire form of its signed bytes (`anm_sendRawTransaction`), paying one output of exactly the
 * amount to `payTo` with the reference the requirements name, and its own chain fee. These
 * checks need no node. They run in this order: the requirements (`checkAnmAccepted`), the
 * payload's shape (`asExactAnmPayload`), then the signed transfer (`checkTransfer`): decoded,
 * its chain and signature (`verifyTx`), recipient, amount, reference, validBefore. As the
 * SDK's exact EVM check (`verifyEIP3009`), the signature comes before the recipient and the
 * amount. Reason codes are in the style of @x402/evm's (`invalid_exact_anm_…`). Nonce and
 * balance are the node's to check (anm-lane.ts).
 */
import { NETWORKS, type SignedTransaction } from '../../../machines/chain/index.ts';
import { MARKET_LANES } from '../../../machines/money/market.ts';
import { verifyTransaction } from '../../chain/codec/verify.ts';
import { strictLowerHex } from '../../strict-hex.ts';

/** `native:1` is the live chain: chain id 1, addresses `anm1…` (DESIGN §3). */
export const ANM_CHAIN = NETWORKS.live;
export const ANM_NETWORK = MARKET_LANES.ANM.network;
export const ANM_ASSET = 'ANM';

export interface ExactAnmPayload {
  /** Lowercase hex of the signed transaction bytes. */
  transaction: string;
  /** Those bytes, decoded once (runtime/strict-hex.ts) for every later check. */
  bytes: Uint8Array;
  /** Unix seconds after which the buyer no longer wants the leg settled (not signed: the buyer's bound). */
  validBefore?: string;
}

export interface AnmExpected {
  scheme: string;
  payTo: string;
  amount: bigint;
  /** The reference the transfer must carry; undefined accepts any. */
  reference?: string | undefined;
}

export interface CheckedTransfer {
  payer: string;
  hash: string;
  tx: SignedTransaction;
  hex: string;
  /** Unix seconds, when the payload bounds the window. */
  validBefore: number | null;
}

export type AnmCheck = { ok: true; transfer: CheckedTransfer } | { ok: false; reason: string; message: string; payer?: string };

const fail = (reason: string, message: string, payer?: string): AnmCheck => ({ ok: false, reason, message, ...(payer && { payer }) });

/** The reference a purchase's leg carries: `mp1:<intent>:<leg>`. */
export const legReference = (intentId: string, leg: 'seller' | 'fee'): string => `mp1:${intentId}:${leg}`;

export function asExactAnmPayload(p: unknown): ExactAnmPayload | null {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return null;
  const { transaction, validBefore } = p as Record<string, unknown>;
  if (typeof transaction !== 'string' || transaction === '') return null;
  const bytes = strictLowerHex(transaction);
  if (!bytes) return null;
  if (validBefore !== undefined && (typeof validBefore !== 'string' || !/^[1-9][0-9]{0,11}$/.test(validBefore))) return null;
  return { transaction, bytes, ...(validBefore !== undefined && { validBefore }) };
}

/** What the payment's `accepted` requirements say, against the expected scheme and network. */
export function checkAnmAccepted(accepted: Record<string, unknown> | undefined, scheme: string): AnmCheck | null {
  if (!accepted || accepted.scheme !== scheme) return fail('invalid_exact_anm_scheme', `scheme must be ${scheme}`);
  if (accepted.network !== ANM_NETWORK) return fail('invalid_exact_anm_network_mismatch', `network must be ${ANM_NETWORK} (never eip155:1)`);
  if (accepted.asset !== undefined && accepted.asset !== ANM_ASSET) return fail('invalid_exact_anm_network_mismatch', `asset must be ${ANM_ASSET}`);
  return null;
}

/** Decodes and checks the signed transfer against the expected payment at `nowS`. Never throws. */
export function checkTransfer(p: ExactAnmPayload, e: AnmExpected, nowS: number): AnmCheck {
  const v = verifyTransaction(p.bytes, ANM_CHAIN);
  if (!v.ok) {
    const code = v.error.code;
    if (code === 'bad_signature') return fail('invalid_exact_anm_signature', v.error.message);
    if (code === 'wrong_chain_id' || code === 'wrong_hrp') return fail('invalid_exact_anm_network_mismatch', v.error.message);
    return fail('invalid_exact_anm_transaction', v.error.message);
  }
  const { tx, from } = v;
  const [out, ...rest] = tx.outputs;
  if (!out || rest.length > 0 || out.to !== e.payTo) return fail('invalid_exact_anm_recipient_mismatch', 'the transfer must have one output, to the payTo of this leg', from);
  if (out.amount !== e.amount) return fail('invalid_exact_anm_amount_mismatch', `the output must be exactly ${e.amount} nANM`, from);
  if (e.reference !== undefined && tx.reference !== e.reference) return fail('invalid_exact_anm_reference_mismatch', `the transfer must carry the reference ${e.reference}`, from);
  const validBefore = p.validBefore === undefined ? null : Number(p.validBefore);
  // As the EVM scheme: at least 6 s left for the transfer to be submitted.
  if (validBefore !== null && validBefore < nowS + 6) return fail('invalid_exact_anm_valid_before', 'the leg expires too soon', from);
  return { ok: true, transfer: { payer: from, hash: v.hash, tx, hex: p.transaction, validBefore } };
}
