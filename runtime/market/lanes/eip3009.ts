/**
 * EIP-3009 `TransferWithAuthorization` as the x402 `exact` EVM scheme carries it, and its
 * checks in the SDK's order and v2 reason codes (@x402/evm `verifyEIP3009`, and its v1
 * `ExactEvmSchemeV1` in the same order): scheme, network, asset, then signature, recipient,
 * validBefore, validAfter, value. The order decides which reason a payment with several faults
 * gets, so it is the SDK's, not cheapest-first. Nonce and balance are the ledger's to check.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { domainSeparator, getAddress, isAddress, isHex, type Hex } from 'viem';
import { recoverSignerSoon } from '../evm-recover.ts';
import { hexOf, keccak256 } from '../keccak.ts';
import { MARKET_LANES, USDC_TOKEN } from '../../../machines/money/market.ts';

export interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

export interface ExactEvmPayload {
  signature: string;
  authorization: Authorization;
}

export const TRANSFER_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The EIP-712 domain of a USDC-like token (USDC v2: name, version, chain id, the contract). */
export function domainOf(t: { name: string; version: string; chainId: number; address: string }) {
  return { name: t.name, version: t.version, chainId: t.chainId, verifyingContract: getAddress(t.address) } as const;
}

export type EvmDomain = ReturnType<typeof domainOf>;

export const USDC_DOMAIN = domainOf(USDC_TOKEN);

const TRANSFER_TYPE_HASH = keccak_256(utf8ToBytes('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'));
const separators = new WeakMap<object, Uint8Array>();
const MAX_UINT256 = 2n ** 256n - 1n;

/** `bytes` bytes of hex text into `buf` at `offset`; throws on text that is not exactly that, as `hexToBytes` would. */
function putHex(buf: Buffer, hex: string, offset: number, bytes: number): void {
  if (hex.length !== bytes * 2 || buf.write(hex, offset, bytes, 'hex') !== bytes) throw new Error(`expected ${bytes} bytes of hex`);
}

/**
 * The EIP-712 digest of a `TransferWithAuthorization`, the words encoded by hand: the same
 * bytes as viem's `hashTypedData` over TRANSFER_TYPES (a property test holds them equal), at
 * a fraction of its cost, which validates the types anew on every call. The domain separator
 * is computed once per domain; the words are written as hex into one buffer and hashed
 * natively where the addon loads (keccak.ts, ADR 0095). Null when a number does not fit a
 * uint256.
 */
export function transferDigest(a: Authorization, domain: EvmDomain = USDC_DOMAIN): Hex | null {
  let separator = separators.get(domain);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain }).slice(2));
    separators.set(domain, separator);
  }
  const words = [BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore)];
  if (words.some((n) => n > MAX_UINT256)) return null;
  // One allocation: the struct's seven words, then the envelope (0x19 0x01, separator, struct hash).
  const buf = Buffer.alloc(7 * 32 + 66);
  buf.set(TRANSFER_TYPE_HASH, 0);
  putHex(buf, a.from.slice(2), 32 + 12, 20);
  putHex(buf, a.to.slice(2), 64 + 12, 20);
  for (let i = 0; i < 3; i++) putHex(buf, words[i]!.toString(16).padStart(64, '0'), 96 + i * 32, 32);
  putHex(buf, a.nonce.slice(2), 192, 32);
  const struct = buf.subarray(0, 224);
  const message = buf.subarray(224);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separator, 2);
  message.set(keccak256(struct), 34);
  return `0x${hexOf(keccak256(message))}`;
}

/** A refusal names `payer` (authorization.from) once the payload is read, as the SDK's does. */
export type Check = { ok: true; payer: string; authorization: Authorization } | { ok: false; reason: string; message: string; payer?: string };

const fail = (reason: string, message: string): Check => ({ ok: false, reason, message });
const uint = /^(0|[1-9][0-9]{0,77})$/;

/** The payload's own shape; anything else is `invalid_payload`. */
export function asExactEvmPayload(p: unknown): ExactEvmPayload | null {
  if (typeof p !== 'object' || p === null) return null;
  const { signature, authorization: a } = p as Record<string, unknown>;
  if (typeof signature !== 'string' || !isHex(signature) || typeof a !== 'object' || a === null) return null;
  const auth = a as Record<string, unknown>;
  const { from, to, value, validAfter, validBefore, nonce } = auth;
  if (typeof from !== 'string' || !isAddress(from, { strict: false }) || typeof to !== 'string' || !isAddress(to, { strict: false })) return null;
  for (const n of [value, validAfter, validBefore]) if (typeof n !== 'string' || !uint.test(n)) return null;
  if (typeof nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return null;
  return { signature, authorization: { from, to, value: value as string, validAfter: validAfter as string, validBefore: validBefore as string, nonce } };
}

export interface Expected {
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount: bigint;
}

/** What the accepted requirements of a payment say, against what the quote expects. */
export function checkAccepted(accepted: Record<string, unknown> | undefined, e: Expected): Check | null {
  if (!accepted || accepted.scheme !== e.scheme) return fail('invalid_exact_evm_scheme', `scheme must be ${e.scheme}`);
  if (accepted.network !== e.network) return fail('invalid_exact_evm_network_mismatch', `network must be ${e.network}`);
  if (typeof accepted.asset !== 'string' || accepted.asset.toLowerCase() !== e.asset.toLowerCase()) return fail('invalid_exact_evm_network_mismatch', `asset must be ${e.asset}`);
  return null;
}

/** The signature over `domain`, then the authorization against the expected payment at `nowS` (Unix seconds). */
export async function checkAuthorization(p: ExactEvmPayload, e: Expected, nowS: number, domain: EvmDomain = USDC_DOMAIN): Promise<Check> {
  const a = p.authorization;
  const payer = a.from.toLowerCase();
  const refuse = (reason: string, message: string): Check => ({ ok: false, reason, message, payer });
  const digest = transferDigest(a, domain);
  if (digest === null) return fail('invalid_payload', 'the authorization cannot be hashed as EIP-712 typed data');
  const signer = await recoverSignerSoon(digest, p.signature);
  if (signer === null) return refuse('invalid_exact_evm_failed_to_parse_signature', 'the signature is not 65 bytes r, s (low s), v (27 or 28)');
  if (signer.toLowerCase() !== payer) return refuse('invalid_exact_evm_signature', 'the signature is not by authorization.from over this domain');
  if (a.to.toLowerCase() !== e.payTo.toLowerCase()) return refuse('invalid_exact_evm_recipient_mismatch', 'authorization.to is not the payTo of this leg');
  // The SDK leaves 6 s for the settlement transaction to land before validBefore.
  if (BigInt(a.validBefore) < BigInt(nowS + 6)) return refuse('invalid_exact_evm_payload_authorization_valid_before', 'the authorization expires too soon');
  if (BigInt(a.validAfter) > BigInt(nowS)) return refuse('invalid_exact_evm_payload_authorization_valid_after', 'the authorization is not valid yet');
  if (BigInt(a.value) !== e.amount) return refuse('invalid_exact_evm_payload_authorization_value_mismatch', `authorization.value must be exactly ${e.amount}`);
  return { ok: true, payer, authorization: a };
}

export const USDC_EXPECTED_BASE = { scheme: MARKET_LANES.USDC.legScheme, network: MARKET_LANES.USDC.network, asset: USDC_TOKEN.address } as const;
