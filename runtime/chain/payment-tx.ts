/**
 * Builds the two transactions a customer or merchant signs: the two-output payment of an
 * intent (merchant_amount to payment_address, protocol_fee to treasury_address, with the
 * intent's reference; DESIGN §3) and a refund from its `unsigned_transfer` (DESIGN §4).
 * No I/O: the CLI and tests feed in the documents and the node's nonce.
 */
import { TerminalError } from '../errors.ts';
import { z } from 'zod';
import { TxError, decodeSignedTxBytes, type Transaction, type TxOutput } from '../../machines/chain/index.ts';
import { hexToBytes } from '@noble/hashes/utils.js';
import { decimalString } from './rpc-types.ts';

const amount = decimalString.transform((s) => BigInt(s));

/** GET /c/{id}/payment.json (public). */
export const paymentDocSchema = z.object({
  id: z.string(),
  status: z.string(),
  network: z.enum(['test', 'live']),
  payment_address: z.string(),
  treasury_address: z.string(),
  merchant_amount: amount,
  protocol_fee: amount,
  anm_amount: amount,
  payment_reference: z.string(),
  expires_at: z.string().nullable(),
});
export type PaymentDoc = z.infer<typeof paymentDocSchema>;

/** `unsigned_transfer` of GET /api/v1/refunds/{id}. */
export const unsignedTransferSchema = z.object({
  chain_id: z.number().int(),
  from: z.string(),
  to: z.string(),
  amount,
  reference: z.string(),
  nonce_hint: z.union([z.number().int().min(0), decimalString]).transform((v) => BigInt(v)).optional(),
  signing_payload: z.string().optional(),
});
export type UnsignedTransfer = z.infer<typeof unsignedTransferSchema>;

export class PaymentBuildError extends TerminalError {}

/**
 * Outputs of a payment. With `total` the amount sent is `total` instead of merchant_amount +
 * protocol_fee, split in the same proportion (fee leg rounded down, the merchant leg takes
 * the rest), so under- and overpayments keep the intent's shape. A leg that rounds to 0 is
 * left out (the chain refuses zero outputs).
 */
export function paymentOutputs(doc: Pick<PaymentDoc, 'payment_address' | 'treasury_address' | 'merchant_amount' | 'protocol_fee'>, total?: bigint): TxOutput[] {
  const expected = doc.merchant_amount + doc.protocol_fee;
  if (expected === 0n) throw new PaymentBuildError('nothing_to_pay', 'the intent asks for 0 nANM');
  let merchant = doc.merchant_amount;
  let fee = doc.protocol_fee;
  if (total !== undefined) {
    if (total <= 0n) throw new PaymentBuildError('bad_amount', 'the amount to pay must be > 0 nANM');
    fee = (doc.protocol_fee * total) / expected;
    merchant = total - fee;
  }
  const outputs: TxOutput[] = [];
  if (merchant > 0n) outputs.push({ to: doc.payment_address, amount: merchant });
  if (fee > 0n) outputs.push({ to: doc.treasury_address, amount: fee });
  return outputs;
}

export interface Signer {
  chainId: number;
  publicKey: Uint8Array;
  nonce: bigint;
  /** Network fee, burned by the devnet. */
  fee?: bigint;
}

export function buildPaymentTx(doc: PaymentDoc, signer: Signer, total?: bigint): Transaction {
  return {
    chain_id: signer.chainId,
    from_public_key: signer.publicKey,
    nonce: signer.nonce,
    outputs: paymentOutputs(doc, total),
    reference: doc.payment_reference,
    fee: signer.fee ?? 0n,
  };
}

/**
 * The refund transaction from its unsigned transfer, signed with `signer`'s key and nonce.
 * If `signing_payload` parses as ANM-TX-v1 signing bytes, it must describe the same transfer
 * (chain, recipient, amount, reference, and key when it carries one); its fee is used.
 */
export function buildRefundTx(u: UnsignedTransfer, signer: Signer): Transaction {
  if (u.chain_id !== signer.chainId) throw new PaymentBuildError('wrong_chain_id', `refund is for chain ${u.chain_id}, the wallet's network is chain ${signer.chainId}`);
  let fee = signer.fee ?? 0n;
  const payload = parseSigningPayload(u.signing_payload);
  if (payload) {
    const out = payload.outputs;
    const same =
      payload.chain_id === u.chain_id && out.length === 1 && out[0]?.to === u.to && out[0].amount === u.amount && payload.reference === u.reference;
    if (!same) throw new PaymentBuildError('inconsistent_transfer', 'signing_payload does not describe the same transfer as the unsigned_transfer fields');
    if (payload.from_public_key.length > 0 && !equalBytes(payload.from_public_key, signer.publicKey)) {
      throw new PaymentBuildError('wrong_wallet', 'signing_payload is for another public key than the wallet');
    }
    if (signer.fee === undefined) fee = payload.fee;
  }
  return { chain_id: u.chain_id, from_public_key: signer.publicKey, nonce: signer.nonce, outputs: [{ to: u.to, amount: u.amount }], reference: u.reference, fee };
}

/** Signing bytes → transaction fields (the bytes plus an empty signature decode as a signed tx). */
function parseSigningPayload(hex: string | undefined): Transaction | undefined {
  if (!hex || !/^([0-9a-f]{2})+$/i.test(hex)) return undefined;
  const bytes = hexToBytes(hex.toLowerCase());
  const withEmptySig = new Uint8Array(bytes.length + 2);
  withEmptySig.set(bytes);
  try {
    return decodeSignedTxBytes(withEmptySig);
  } catch (e) {
    if (e instanceof TxError) return undefined;
    throw e;
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
