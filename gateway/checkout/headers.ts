/**
 * Security headers of every hosted page (spec "/c/{id}", DESIGN §4): a strict CSP with no
 * inline script (page data travels in `<script type="application/json">`), nosniff, no
 * referrer (the intent id in the URL is a capability), and framing denied unless the page is
 * the widget's embed, which the merchant's allowed origins may frame.
 */
import type { FastifyReply } from 'fastify';
import { safeOrigins } from '../../runtime/merchant/origins.ts';

/** `'none'`, or the merchant's allowed origins (normalised; anything odd is dropped). */
export function frameAncestors(embedOrigins: readonly string[] | null): string {
  if (embedOrigins === null) return "'none'";
  const origins = safeOrigins(embedOrigins);
  return origins.length > 0 ? origins.join(' ') : "'none'";
}

export function contentSecurityPolicy(embedOrigins: readonly string[] | null): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors(embedOrigins)}`,
  ].join('; ');
}

/** Headers for an HTML page; `embedOrigins` null means "not embeddable". */
export function pageHeaders(embedOrigins: readonly string[] | null): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': contentSecurityPolicy(embedOrigins),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  };
  if (embedOrigins === null) h['X-Frame-Options'] = 'DENY';
  return h;
}

export function sendPage(reply: FastifyReply, status: number, html: string, embedOrigins: readonly string[] | null = null): FastifyReply {
  return reply.code(status).headers(pageHeaders(embedOrigins)).send(html);
}
