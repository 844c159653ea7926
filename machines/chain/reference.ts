/**
 * Payment and refund references: a version prefix, a colon, then lowercase unpadded
 * RFC 4648 base32 of 20 caller-supplied bytes (32 characters). Committed in signed bytes.
 */
import { base32nopad } from '@scure/base';

export const REFERENCE_BYTES = 20;
export const PAYMENT_REFERENCE_PREFIX = 'pr1:';
export const REFUND_REFERENCE_PREFIX = 'rf1:';

const PAYMENT_RE = /^pr1:[a-z2-7]{32}$/;
const REFUND_RE = /^rf1:[a-z2-7]{32}$/;

export type ReferenceKind = 'payment' | 'refund';

function encode(prefix: string, bytes: Uint8Array): string {
  if (bytes.length !== REFERENCE_BYTES) {
    throw new RangeError(`a reference takes exactly ${REFERENCE_BYTES} bytes, got ${bytes.length}`);
  }
  return prefix + base32nopad.encode(bytes).toLowerCase();
}

export function paymentReference(bytes: Uint8Array): string {
  return encode(PAYMENT_REFERENCE_PREFIX, bytes);
}

export function refundReference(bytes: Uint8Array): string {
  return encode(REFUND_REFERENCE_PREFIX, bytes);
}

export function isPaymentReference(s: unknown): s is string {
  return typeof s === 'string' && PAYMENT_RE.test(s);
}

export function isRefundReference(s: unknown): s is string {
  return typeof s === 'string' && REFUND_RE.test(s);
}

/** Kind and the 20 bytes of a reference, or undefined if it is neither kind. */
export function decodeReference(s: unknown): { kind: ReferenceKind; bytes: Uint8Array } | undefined {
  const kind: ReferenceKind | undefined = isPaymentReference(s) ? 'payment' : isRefundReference(s) ? 'refund' : undefined;
  if (kind === undefined || typeof s !== 'string') return undefined;
  // 32 chars × 5 bits = 160 bits exactly, so every such string decodes.
  return { kind, bytes: base32nopad.decode(s.slice(4).toUpperCase()) };
}
