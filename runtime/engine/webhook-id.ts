import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** JSON with object keys sorted, so equal facts hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** `evt_<hex>` named by the fact (merchant, type, data), never by the delivery. */
export function webhookEventId(merchant: string, type: string, data: unknown): string {
  const digest = sha256(utf8ToBytes(`${merchant}\n${type}\n${canonicalJson(data)}`));
  return `evt_${bytesToHex(digest.subarray(0, 16))}`;
}
