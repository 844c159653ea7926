/**
 * ANM transactions: canonical signing bytes, signed bytes, hex wire form, hash, verify.
 * The byte layout is specified field by field in docs/chain.md; keep the two in step.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { addressFromPublicKey, decodeAddress } from './address.ts';
import { ByteReader, ByteWriter, U16_MAX, U32_MAX, U64_MAX, asciiToBytes, bytesToAscii, isPrintableAscii } from './bytes.ts';
import { AddressError, TxError } from './errors.ts';
import {
  ML_DSA65_PUBLIC_KEY_LENGTH,
  TX_SIGNATURE_CONTEXT,
  mlDsaSign,
  nobleVerify,
  type SignatureVerifier,
} from './mldsa.ts';

/** Domain-separation prefix of the signing bytes (also the ML-DSA context string). */
export const TX_MAGIC = 'ANM-TX-v1';
const MAGIC_BYTES = asciiToBytes(TX_MAGIC);
/** Consensus limits checked by verifyTx (the encoding itself can carry more). */
export const MAX_OUTPUTS = 256;
export const MAX_REFERENCE_LENGTH = 64;

export interface TxOutput {
  /** bech32m address of the recipient. */
  to: string;
  /** nANM, 1..2^64-1. */
  amount: bigint;
}

export interface Transaction {
  chain_id: number;
  from_public_key: Uint8Array;
  nonce: bigint;
  outputs: TxOutput[];
  /** `pr1:…`, `rf1:…`, another printable-ASCII tag, or '' for none. */
  reference: string;
  /** nANM. */
  fee: bigint;
}

export interface SignedTransaction extends Transaction {
  signature: Uint8Array;
}

function u64(value: bigint, field: string): bigint {
  if (typeof value !== 'bigint' || value < 0n || value > U64_MAX) {
    throw new TxError(field === 'nonce' ? 'malformed' : 'amount_out_of_range', `${field} must be a bigint in 0..2^64-1`);
  }
  return value;
}

function writeUnsigned(w: ByteWriter, tx: Transaction): void {
  if (!Number.isInteger(tx.chain_id) || tx.chain_id < 0 || tx.chain_id > U32_MAX) {
    throw new TxError('malformed', 'chain_id must be an integer in 0..2^32-1');
  }
  if (!(tx.from_public_key instanceof Uint8Array) || tx.from_public_key.length > U16_MAX) {
    throw new TxError('bad_public_key', 'from_public_key must be bytes, at most 65535');
  }
  if (tx.outputs.length > U16_MAX) throw new TxError('too_many_outputs', 'at most 65535 outputs can be encoded');
  w.bytes(MAGIC_BYTES).u32(tx.chain_id);
  w.u16(tx.from_public_key.length).bytes(tx.from_public_key);
  w.u64(u64(tx.nonce, 'nonce'));
  w.u16(tx.outputs.length);
  tx.outputs.forEach((o, i) => {
    if (typeof o.to !== 'string' || o.to.length > 255 || !isPrintableAscii(o.to)) {
      throw new TxError('bad_address', `outputs[${i}].to must be printable ASCII, at most 255 characters`);
    }
    w.u8(o.to.length).bytes(asciiToBytes(o.to)).u64(u64(o.amount, `outputs[${i}].amount`));
  });
  if (typeof tx.reference !== 'string' || tx.reference.length > 255 || !isPrintableAscii(tx.reference)) {
    throw new TxError('bad_reference', 'reference must be printable ASCII, at most 255 characters');
  }
  w.u8(tx.reference.length).bytes(asciiToBytes(tx.reference));
  w.u64(u64(tx.fee, 'fee'));
}

/** The exact bytes that are signed. Throws TxError if a field cannot be encoded. */
export function signingBytes(tx: Transaction): Uint8Array {
  const w = new ByteWriter();
  writeUnsigned(w, tx);
  return w.finish();
}

/** Signing bytes ‖ u16 signature length ‖ signature. */
export function encodeSignedTxBytes(signed: SignedTransaction): Uint8Array {
  const w = new ByteWriter();
  writeUnsigned(w, signed);
  if (!(signed.signature instanceof Uint8Array) || signed.signature.length > U16_MAX) {
    throw new TxError('bad_signature', 'signature must be bytes, at most 65535');
  }
  return w.u16(signed.signature.length).bytes(signed.signature).finish();
}

function readAscii(r: ByteReader, len: number, what: string): string {
  const s = bytesToAscii(r.bytes(len, what));
  if (s === undefined) throw new TxError('malformed', `${what} is not printable ASCII`);
  return s;
}

/** Parses signed bytes; throws TxError('malformed'). No semantic checks: see verifyTx. */
export function decodeSignedTxBytes(bytes: Uint8Array): SignedTransaction {
  const r = new ByteReader(bytes);
  const magic = r.bytes(MAGIC_BYTES.length, 'magic');
  if (!magic.every((b, i) => b === MAGIC_BYTES[i])) throw new TxError('malformed', `bytes do not start with "${TX_MAGIC}"`);
  const chain_id = r.u32('chain_id');
  const from_public_key = r.bytes(r.u16('public key length'), 'from_public_key');
  const nonce = r.u64('nonce');
  const count = r.u16('output count');
  const outputs: TxOutput[] = [];
  for (let i = 0; i < count; i++) {
    const to = readAscii(r, r.u8(`outputs[${i}] address length`), `outputs[${i}].to`);
    outputs.push({ to, amount: r.u64(`outputs[${i}].amount`) });
  }
  const reference = readAscii(r, r.u8('reference length'), 'reference');
  const fee = r.u64('fee');
  const signature = r.bytes(r.u16('signature length'), 'signature');
  if (r.remaining !== 0) throw new TxError('malformed', `${r.remaining} trailing bytes after the signature`);
  return { chain_id, from_public_key, nonce, outputs, reference, fee, signature };
}

/** Lowercase hex of the signed bytes: the wire form (`anm_sendRawTransaction`). */
export function encodeSignedTx(signed: SignedTransaction): string {
  return bytesToHex(encodeSignedTxBytes(signed));
}

export function decodeSignedTx(hex: string): SignedTransaction {
  return decodeSignedTxBytes(hexToBytesStrict(hex));
}

function hexToBytesStrict(hex: string): Uint8Array {
  // A signed transfer is ~10,000 hex digits: noble's decoder checks each digit as it decodes
  // (odd lengths, `0x` and anything else refused), so no pattern scans the string first.
  try {
    return hexToBytes(hex);
  } catch {
    throw new TxError('malformed', 'transaction must be an even-length hex string without 0x');
  }
}

/** Hex SHA-256 of the signed bytes. */
export function txHash(signed: SignedTransaction | Uint8Array): string {
  return bytesToHex(sha256(signed instanceof Uint8Array ? signed : encodeSignedTxBytes(signed)));
}

/**
 * Pure ML-DSA-65 signature over the signing bytes with context "ANM-TX-v1". Without
 * `entropy` the signature is deterministic; the runtime passes 32 random bytes.
 */
export function signTx(tx: Transaction, secretKey: Uint8Array, entropy?: Uint8Array): SignedTransaction {
  const signature = mlDsaSign(signingBytes(tx), secretKey, TX_SIGNATURE_CONTEXT, entropy);
  return { ...tx, outputs: tx.outputs.map((o) => ({ ...o })), signature };
}

export interface VerifyTxOptions {
  chainId: number;
  hrp: string;
  /** Signature backend; runtime code passes runtime/chain/codec/verify.ts's verifySignature. */
  verify?: SignatureVerifier;
  /**
   * SHA-256 for the transaction hash and the sender's address (noble's when absent). Runtime
   * code passes Node's native one (codec/verify.ts's nativeSha256): a signed transfer is about
   * 5 KB, hashed several times per purchase.
   */
  sha256?: (bytes: Uint8Array) => Uint8Array;
}

export type VerifyTxResult =
  | { ok: true; tx: SignedTransaction; hash: string; from: string; bytes: Uint8Array }
  | { ok: false; error: TxError };

function fail(code: TxError['code'], message: string): VerifyTxResult {
  return { ok: false, error: new TxError(code, message) };
}

/**
 * Every check a node makes on a transaction apart from nonce and balance (state): decodes,
 * then chain id, key, outputs, amounts, reference and last the signature. Never throws.
 */
export function verifyTx(input: SignedTransaction | Uint8Array | string, opts: VerifyTxOptions): VerifyTxResult {
  let tx: SignedTransaction;
  let bytes: Uint8Array;
  try {
    if (typeof input === 'string') bytes = hexToBytesStrict(input);
    else if (input instanceof Uint8Array) bytes = input;
    else bytes = encodeSignedTxBytes(input);
    tx = decodeSignedTxBytes(bytes);
  } catch (e) {
    if (e instanceof TxError) return { ok: false, error: e };
    return fail('malformed', e instanceof Error ? e.message : String(e));
  }
  if (tx.chain_id !== opts.chainId) return fail('wrong_chain_id', `chain_id ${tx.chain_id}, this network is ${opts.chainId}`);
  if (tx.from_public_key.length !== ML_DSA65_PUBLIC_KEY_LENGTH) {
    return fail('bad_public_key', `from_public_key is ${tx.from_public_key.length} bytes, ML-DSA-65 needs ${ML_DSA65_PUBLIC_KEY_LENGTH}`);
  }
  if (tx.outputs.length === 0) return fail('no_outputs', 'a transaction needs at least one output');
  if (tx.outputs.length > MAX_OUTPUTS) return fail('too_many_outputs', `${tx.outputs.length} outputs, at most ${MAX_OUTPUTS}`);
  let total = tx.fee;
  for (const [i, o] of tx.outputs.entries()) {
    try {
      const d = decodeAddress(o.to, opts.hrp);
      if (d.address !== o.to) return fail('bad_address', `outputs[${i}].to is not in canonical lowercase form`);
    } catch (e) {
      if (e instanceof AddressError && e.code === 'wrong_hrp') return fail('wrong_hrp', `outputs[${i}].to: ${e.message}`);
      return fail('bad_address', `outputs[${i}].to: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (o.amount === 0n) return fail('amount_out_of_range', `outputs[${i}].amount is zero`);
    total += o.amount;
  }
  if (total > U64_MAX) return fail('amount_out_of_range', 'outputs plus fee exceed 2^64-1 nANM');
  if (tx.reference.length > MAX_REFERENCE_LENGTH) {
    return fail('bad_reference', `reference is ${tx.reference.length} characters, at most ${MAX_REFERENCE_LENGTH}`);
  }
  const verify = opts.verify ?? nobleVerify;
  const message = bytes.subarray(0, bytes.length - 2 - tx.signature.length);
  if (!verify(tx.from_public_key, message, tx.signature, TX_SIGNATURE_CONTEXT)) {
    return fail('bad_signature', 'ML-DSA-65 signature does not verify for from_public_key');
  }
  const hash = opts.sha256 ?? sha256;
  return { ok: true, tx, hash: bytesToHex(hash(bytes)), from: addressFromPublicKey(tx.from_public_key, opts.hrp, hash), bytes };
}
