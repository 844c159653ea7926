/**
 * ANM addresses: bech32m(hrp, SHA-256(ML-DSA-65 public key)). The payload is the raw
 * 32-byte hash (no witness version). The hrp says the network, so a test wallet can never
 * pay a live intent by mistake.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m } from '@scure/base';
import { AddressError } from './errors.ts';
import { ML_DSA65_PUBLIC_KEY_LENGTH } from './mldsa.ts';

export const NETWORKS = {
  live: { chainId: 1, hrp: 'anm' },
  test: { chainId: 1001, hrp: 'tanm' },
} as const;

export type NetworkName = keyof typeof NETWORKS;
export interface Network {
  chainId: number;
  hrp: string;
}

/** bech32m caps strings at 90 chars by default; ours are 62-63, the cap is a sanity bound. */
export const ADDRESS_MAX_LENGTH = 1023;
export const ADDRESS_HASH_LENGTH = 32;
const ADDRESS_WORDS = Math.ceil((ADDRESS_HASH_LENGTH * 8) / 5); // 52
const CHARSET = /^[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/;

export function networkByHrp(hrp: string): NetworkName | undefined {
  for (const name of Object.keys(NETWORKS) as NetworkName[]) {
    if (NETWORKS[name].hrp === hrp) return name;
  }
  return undefined;
}

export function networkByChainId(chainId: number): NetworkName | undefined {
  for (const name of Object.keys(NETWORKS) as NetworkName[]) {
    if (NETWORKS[name].chainId === chainId) return name;
  }
  return undefined;
}

/** Address of a 32-byte public-key hash. */
export function encodeAddress(hrp: string, hash: Uint8Array): string {
  if (hash.length !== ADDRESS_HASH_LENGTH) {
    throw new AddressError('wrong_length', `address payload must be ${ADDRESS_HASH_LENGTH} bytes, got ${hash.length}`);
  }
  if (!/^[a-z]{1,83}$/.test(hrp)) throw new AddressError('bad_format', `hrp must be lowercase letters, got ${JSON.stringify(hrp)}`);
  return bech32m.encode(hrp, bech32m.toWords(hash), ADDRESS_MAX_LENGTH);
}

/** `hash`: SHA-256 (noble's unless the caller has a faster one: VerifyTxOptions.sha256). */
export function addressFromPublicKey(publicKey: Uint8Array, hrp: string, hash: (bytes: Uint8Array) => Uint8Array = sha256): string {
  if (publicKey.length !== ML_DSA65_PUBLIC_KEY_LENGTH) {
    throw new AddressError('wrong_length', `ML-DSA-65 public key must be ${ML_DSA65_PUBLIC_KEY_LENGTH} bytes, got ${publicKey.length}`);
  }
  return encodeAddress(hrp, hash(publicKey));
}

export interface DecodedAddress {
  hrp: string;
  /** SHA-256 of the owner's public key. */
  hash: Uint8Array;
  /** Canonical (lowercase) form of the input. */
  address: string;
}

/**
 * Decodes and checks an address. All-uppercase input is accepted (QR codes) and returned in
 * canonical lowercase; mixed case is refused as BIP-350 requires.
 */
export function decodeAddress(addr: unknown, expectedHrp?: string): DecodedAddress {
  if (typeof addr !== 'string') throw new AddressError('bad_format', 'address must be a string');
  if (addr.length > ADDRESS_MAX_LENGTH) throw new AddressError('bad_format', `address longer than ${ADDRESS_MAX_LENGTH} characters`);
  const lower = addr.toLowerCase();
  if (addr !== lower && addr !== addr.toUpperCase()) throw new AddressError('bad_format', 'address mixes upper and lower case');
  const sep = lower.lastIndexOf('1');
  if (sep < 1) throw new AddressError('bad_format', 'address has no hrp/data separator "1"');
  const hrp = lower.slice(0, sep);
  const data = lower.slice(sep + 1);
  if (!/^[a-z]+$/.test(hrp)) throw new AddressError('bad_format', `hrp ${JSON.stringify(hrp)} is not lowercase letters`);
  if (data.length < 6 || !CHARSET.test(data)) throw new AddressError('bad_format', 'address data is not bech32 characters');
  let words: number[];
  try {
    words = bech32m.decode(lower, ADDRESS_MAX_LENGTH).words;
  } catch {
    throw new AddressError('bad_checksum', 'bech32m checksum does not verify');
  }
  if (expectedHrp !== undefined && hrp !== expectedHrp) {
    throw new AddressError('wrong_hrp', `address is for hrp "${hrp}", expected "${expectedHrp}"`);
  }
  if (words.length !== ADDRESS_WORDS) {
    throw new AddressError('wrong_length', `address payload must be ${ADDRESS_HASH_LENGTH} bytes`);
  }
  let hash: Uint8Array;
  try {
    hash = bech32m.fromWords(words);
  } catch {
    throw new AddressError('wrong_length', 'address payload has non-zero padding bits');
  }
  return { hrp, hash, address: lower };
}

export function isAddress(addr: unknown, expectedHrp?: string): addr is string {
  try {
    decodeAddress(addr, expectedHrp);
    return true;
  } catch {
    return false;
  }
}
