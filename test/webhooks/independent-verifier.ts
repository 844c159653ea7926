import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A webhook verifier written from the spec's "Verification" steps alone (node:crypto only,
 * nothing from runtime/), so a bug shared by the signer and the service's own helpers
 * cannot make both agree:
 *   1. read the raw body bytes, never re-serialised JSON;
 *   2. build `v1:<Service-Timestamp>:<Service-Event-ID>:<raw_body>`;
 *   3. HMAC-SHA256 it with the endpoint secret, hex-encoded;
 *   4. compare in constant time with each `v1=` entry of Service-Signature; one match verifies;
 *   5. reject when |now − Service-Timestamp| > 300 s.
 */
export type Verdict = { ok: true; eventId: string } | { ok: false; reason: string };

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const key = Object.keys(h).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key === undefined ? undefined : h[key];
  return Array.isArray(v) ? v.join(',') : v;
}

export function verifyIndependently(input: { rawBody: Buffer; headers: Headers; secret: string; nowSeconds: number }): Verdict {
  const sig = header(input.headers, 'Service-Signature');
  const eventId = header(input.headers, 'Service-Event-ID');
  const ts = header(input.headers, 'Service-Timestamp');
  if (!sig || !eventId || !ts) return { ok: false, reason: 'missing header' };
  if (!/^[0-9]+$/.test(ts)) return { ok: false, reason: 'bad timestamp' };
  // Step 5 (checked first: cheap, and a stale delivery is refused whatever its signature).
  if (Math.abs(input.nowSeconds - Number(ts)) > 300) return { ok: false, reason: 'stale timestamp' };
  // Steps 1-3 on bytes: the body is never decoded and re-encoded.
  const signed = Buffer.concat([Buffer.from(`v1:${ts}:${eventId}:`, 'utf8'), input.rawBody]);
  const expected = Buffer.from(createHmac('sha256', input.secret).update(signed).digest('hex'), 'utf8');
  // Step 4.
  let match = false;
  for (const entry of sig.split(',')) {
    const m = /^\s*v1=([0-9a-f]{64})\s*$/.exec(entry);
    if (!m) continue;
    const given = Buffer.from(m[1]!, 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) match = true;
  }
  if (!match) return { ok: false, reason: 'no matching signature' };
  return { ok: true, eventId };
}
