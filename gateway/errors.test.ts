import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCodes } from 'fastify';
import { MerchantConflict, MerchantNotFound } from '../runtime/merchant/merchants.ts';
import { CursorNotFound } from '../runtime/merchant/intent-reads.ts';
import { RuntimeError, TerminalError } from '../runtime/errors.ts';
import { WebhookError } from '../runtime/webhooks/errors.ts';
import { AppError, ERRORS, envelope, ensureError, errorType, FASTIFY_CLIENT_ERRORS, FASTIFY_OWN_FAULTS_MARKED_4XX } from './errors.ts';

// Rows of docs/errors.md: | `code` | status | type | when |
const rows = [...readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8').matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (\w+) \|/gm)].map((m) => ({
  code: m[1]!,
  status: Number(m[2]),
  type: m[3]!,
}));

// Spec "Errors" table, every code it names.
const SPEC_CODES = [
  'invalid_json', 'invalid_body', 'bad_request', 'idempotency_key_required', 'amount_must_be_string', 'invalid_amount',
  'currency_unsupported', 'invalid_metadata', 'invalid_url', 'field_not_settable', 'invalid_status', 'invalid_request',
  'unauthorized', 'forbidden', 'not_found', 'method_not_allowed', 'idempotency_key_reused', 'not_cancellable', 'not_refundable',
  'refund_refused', 'payload_too_large', 'rate_limited', 'internal_error',
];

describe('error table', () => {
  it('docs/errors.md lists every code of the table, with its status and type', () => {
    const table = Object.entries(ERRORS).map(([code, e]) => ({ code, status: e.status, type: errorType(e.status) }));
    expect(rows).toEqual(table);
  });

  it('every code the spec names is in the table exactly once, with the spec status', () => {
    for (const c of SPEC_CODES) expect(ERRORS, c).toHaveProperty(c);
    expect(new Set(rows.map((r) => r.code)).size).toBe(rows.length);
    expect(ERRORS.payload_too_large.status).toBe(413);
    expect(ERRORS.rate_limited.status).toBe(429);
    expect(ERRORS.internal_error.status).toBe(500);
  });

  it('unknown errors become a generic 500 that leaks nothing', () => {
    const e = ensureError(new Error('secret: password=hunter2'));
    expect(e.code).toBe('internal_error');
    const env = envelope(e, 'req_1');
    expect(env).toEqual({ error: { type: 'api_error', code: 'internal_error', message: ERRORS.internal_error.message, request_id: 'req_1' } });
    expect(envelope(new AppError('internal_error', 'details'), 'r').error.message).toBe(ERRORS.internal_error.message);
  });

  it('429 carries retryAfter; nothing else does', () => {
    expect(envelope(new AppError('rate_limited', undefined, { retryAfter: 7 }), 'r').error.retryAfter).toBe(7);
    expect(envelope(new AppError('not_found'), 'r').error).not.toHaveProperty('retryAfter');
  });

  it("Fastify's own request errors map to table codes", () => {
    expect(ensureError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })).code).toBe('payload_too_large');
    expect(ensureError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 })).code).toBe('invalid_json');
    expect(ensureError(Object.assign(new SyntaxError('x'), { statusCode: 400 })).code).toBe('invalid_json');
    expect(ensureError(new SyntaxError('bug')).code).toBe('internal_error');
  });

  it("every code in Fastify's exported errorCodes maps to a code of the table with a spec status (issue 26 item 2)", () => {
    const names = Object.keys(errorCodes) as Array<keyof typeof errorCodes>;
    expect(names.length).toBeGreaterThan(50);
    for (const name of names) {
      const FastifyErr = errorCodes[name] as unknown as new (...a: string[]) => Error & { code: string; statusCode?: number };
      const thrown = new FastifyErr('a', 'b', 'c');
      expect(thrown.code, name).toBe(name);
      const e = ensureError(thrown);
      expect(ERRORS[e.code].status, name).toBe(e.status);
      const theirs = thrown.statusCode ?? 500;
      const client = (FASTIFY_CLIENT_ERRORS as Record<string, string>)[name];
      if (client !== undefined) {
        // A request's fault stays a request's fault (a 414 becomes the 404 an unknown id gets, a 415 our 400).
        expect(e.code, name).toBe(client);
        expect(theirs, name).toBeLessThan(500);
        expect(e.status, name).toBeLessThan(500);
      } else {
        // Anything else is a fault of ours: a 500 that says nothing; Fastify must not think it the client's.
        expect(e.code, name).toBe('internal_error');
        if (theirs < 500) expect(FASTIFY_OWN_FAULTS_MARKED_4XX, `${name} is ${theirs}: map it or name it as ours`).toContain(name);
      }
    }
    expect(ensureError(new errorCodes.FST_ERR_BAD_URL('%ff')).code).toBe('bad_request');
    expect(ensureError(new errorCodes.FST_ERR_MAX_PARAM_LENGTH('x')).code).toBe('not_found');
  });

  it('runtime errors: terminal ones by their code, retryable and unknown ones a generic 500 (issue 28 item 4)', () => {
    expect(ensureError(new MerchantNotFound('mer_1'))).toMatchObject({ code: 'not_found', status: 404 });
    expect(ensureError(new MerchantConflict('taken'))).toMatchObject({ code: 'conflict', message: 'taken' });
    expect(ensureError(new CursorNotFound()).code).toBe('bad_request');
    expect(ensureError(new WebhookError('url_not_allowed', 'private'))).toMatchObject({ code: 'url_not_allowed', message: 'private' });
    expect(ensureError(new TerminalError('no_such_code', 'secret detail'))).toMatchObject({ code: 'internal_error' });
    // A retryable error is never the client's fault, whatever statusCode it carries.
    expect(ensureError(Object.assign(new RuntimeError('version_conflict', 'x'), { statusCode: 409 })).code).toBe('internal_error');
  });
});
