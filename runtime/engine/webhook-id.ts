import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal facts hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/**
 * `evt_<hex>` named by the fact (merchant, type, data), never by the delivery. Node's native
 * SHA-256: every intent event hashes about a kilobyte here (1.5 µs native, 9 µs in JavaScript).
 */
export function webhookEventId(merchant: string, type: string, data: unknown): string {
  const digest = createHash('sha256').update(`${merchant}\n${type}\n${canonicalJson(data)}`, 'utf8').digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}
