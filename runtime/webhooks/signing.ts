import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signatures exactly as the spec's "Events" section: HMAC-SHA256 with the endpoint
 * secret over `v1:<Service-Timestamp>:<Service-Event-ID>:<raw body>`, hex, and one `v1=`
 * entry per active secret in `Service-Signature`.
 */
export const SIGNATURE_SCHEME = 'v1';

export function signedString(timestamp: number, eventId: string, rawBody: string): string {
  return `${SIGNATURE_SCHEME}:${timestamp}:${eventId}:${rawBody}`;
}

export function sign(secret: string, timestamp: number, eventId: string, rawBody: string): string {
  return createHmac('sha256', secret).update(signedString(timestamp, eventId, rawBody), 'utf8').digest('hex');
}

/** The header value: newest secret first, so receivers that check only the first entry still pass. */
export function signatureHeader(secrets: readonly string[], timestamp: number, eventId: string, rawBody: string): string {
  return secrets.map((s) => `${SIGNATURE_SCHEME}=${sign(s, timestamp, eventId, rawBody)}`).join(',');
}

/** `whsec_` + 32 random bytes as base64url (43 characters). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
