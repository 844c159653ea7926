/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec "Errors" (envelope, 404, 405, 500) and "Versioning". */
import { beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../gateway/errors.ts';
import { checkAgainstOpenApi, compileDocument } from './openapi-check.ts';
import { idem, intentBody, useHarness } from './harness.ts';

const WRONG_VERB: Array<[string, string]> = [
  ['DELETE', '/api/v1/payment-intents'],
  ['PUT', '/api/v1/payment-intents/pay_aaaaaaaaaaaaaaaaaaaaaaaa'],
  ['PATCH', '/api/v1/payment-intents/pay_aaaaaaaaaaaaaaaaaaaaaaaa'],
  ['GET', '/api/v1/payment-intents/pay_aaaaaaaaaaaaaaaaaaaaaaaa/cancel'],
  ['POST', '/api/v1/balance'],
  ['POST', '/healthz'],
  ['POST', '/api/v1/openapi.json'],
];

describe('conformance: errors and versioning', () => {
  const h = useHarness();
  let key: string;
  beforeAll(async () => {
    key = (await h().merchant()).keys.test.secret;
  });

  it('Errors: "Envelope for every error": error.type, error.code, error.message, error.request_id (the request-id header)', async () => {
    for (const r of [
      await h().req('GET', '/api/v1/balance'),
      await h().req('GET', '/nowhere'),
      await h().req('POST', '/api/v1/payment-intents', { key, body: '{' }),
    ]) {
      expect(Object.keys(r.json)).toEqual(['error']);
      expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'request_id', 'type']);
      expect(r.json.error.request_id).toBe(r.headers['request-id']);
      expect(r.json.error.type).toBe('invalid_request');
    }
  });

  it('Errors: "error.request_id present in every error body" and unique per request', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await h().req('GET', '/api/v1/balance')).json.error.request_id as string);
    expect(ids.size).toBe(5);
  });

  it('Errors: "500 internal_error: type api_error; only request_id is returned" — 5xx messages are generic, no stack traces', async () => {
    h().hooks.beforeApply = () => Promise.reject(new Error('connection to 10.0.0.7:5432 refused at Pool.connect (/srv/app/pg.js:42)'));
    const r = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: intentBody() });
    h().hooks.beforeApply = undefined;
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({ type: 'api_error', code: 'internal_error', message: ERRORS.internal_error.message, request_id: r.headers['request-id'] });
    expect(r.text).not.toMatch(/10\.0\.0\.7|Pool\.connect|\.js:|at /);
  });

  it.each(WRONG_VERB)('Errors: "405 method_not_allowed: known path, wrong verb" (%s %s)', async (method, path) => {
    const r = await h().req(method, path, { key });
    expect(r.status).toBe(405);
    expect(r.json.error.code).toBe('method_not_allowed');
    expect(String(r.headers.allow)).toMatch(/GET|POST/);
  });

  it('Errors: "404 not_found: unknown id"; an unknown path is the same envelope', async () => {
    const unknownId = await h().req('GET', '/api/v1/payment-intents/pay_aaaaaaaaaaaaaaaaaaaaaaaa', { key });
    expect(unknownId.status).toBe(404);
    expect(unknownId.json.error.code).toBe('not_found');
    const malformedId = await h().req('GET', '/api/v1/payment-intents/not-an-id', { key });
    expect(malformedId.status).toBe(404);
    for (const path of ['/api/v1/nothing', '/api/v1/payment-intents/', '/nothing', '/api/v1/refunds/re_x/../x']) {
      const r = await h().req('GET', path, { key });
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
  });

  it('Versioning 1: "The API is versioned by the path prefix /api/v1"', async () => {
    expect((await h().req('GET', '/api/v2/balance', { key })).status).toBe(404);
    expect((await h().req('GET', '/api/balance', { key })).status).toBe(404);
    expect((await h().req('GET', '/api/v1/balance', { key })).status).toBe(200);
  });

  it('Versioning 2: "The machine-readable description of this interface is at version 10.1.0" (OpenAPI 3.1)', async () => {
    const r = await h().req('GET', '/api/v1/openapi.json');
    expect(r.json.openapi).toBe('3.1.0');
    expect(r.json.info.version).toBe('10.1.0');
    for (const p of ['/api/v1/payment-intents', '/api/v1/payment-intents/{id}', '/api/v1/payment-intents/{id}/cancel', '/api/v1/balance', '/healthz']) {
      expect(r.json.paths[p], p).toBeDefined();
    }
    for (const code of Object.keys(ERRORS)) expect(r.json.components.schemas.Error.properties.error.properties.code.enum).toContain(code);
    expect(compileDocument(r.json)).toBeGreaterThan(40);
  });

  it('Endpoints: /c/{id}, /c/{id}/events and /widget.js are described, and what they answer matches the description', async () => {
    type Op = { responses: Record<string, { content: Record<string, Record<string, unknown>> }> };
    const doc = (await h().req('GET', '/api/v1/openapi.json')).json as { paths: Record<string, { get: Op }>; components: { schemas: Record<string, { required: string[] }> } };
    for (const p of ['/c/{id}', '/c/{id}/events', '/widget.js']) expect(doc.paths[p]?.get, p).toBeDefined();
    expect(Object.keys(doc.paths['/c/{id}']!.get.responses)).toEqual(expect.arrayContaining(['200', '404', '429']));
    expect(doc.paths['/c/{id}/events']!.get.responses['200']!.content['text/event-stream']!['x-item-schema']).toEqual({ $ref: '#/components/schemas/CheckoutStatus' });
    expect(doc.components.schemas.CheckoutStatus!.required).toEqual(expect.arrayContaining(['version', 'status', 'payable', 'final']));
    // Seen responses are checked against the document after the file (status and media type).
    const c = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: intentBody() });
    const page = await h().req('GET', `/c/${c.json.id}`);
    expect([page.status, page.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect((await h().req('GET', '/c/pay_aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    const w = await h().req('GET', '/widget.js');
    expect(w.status).toBe(200);
    expect((await h().req('GET', '/widget.js', { headers: { 'if-none-match': String(w.headers.etag) } })).status).toBe(304);
  });

  it('The OpenAPI check refuses a page served with a media type its description does not name', async () => {
    const doc = (await h().req('GET', '/api/v1/openapi.json')).json as Record<string, unknown>;
    const problems = checkAgainstOpenApi(doc, [{ method: 'GET', path: '/c/pay_aaaaaaaaaaaaaaaaaaaaaaaa', status: 200, body: undefined, headers: { 'content-type': 'application/json' } }]);
    expect(problems).toHaveLength(1);
  });

  it('Versioning 4: "Every listed route is marked live"', async () => {
    const doc = (await h().req('GET', '/api/v1/openapi.json')).json as { paths: Record<string, Record<string, { 'x-status': string }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops.length).toBeGreaterThan(5);
    for (const op of ops) expect(op['x-status']).toBe('live');
  });

  it('The OpenAPI check itself refuses an undocumented status and a body off its schema', async () => {
    const doc = (await h().req('GET', '/api/v1/openapi.json')).json as Record<string, unknown>;
    const problems = checkAgainstOpenApi(doc, [
      { method: 'GET', path: '/api/v1/balance', status: 418, body: {}, headers: { 'content-type': 'application/json' } },
      { method: 'GET', path: '/api/v1/balance', status: 200, body: { object: 'balance', mode: 'test' }, headers: { 'content-type': 'application/json' } },
      { method: 'GET', path: '/x', status: 404, body: { error: { code: 'nope' } }, headers: { 'content-type': 'application/json' } },
    ]);
    expect(problems).toHaveLength(3);
  });
});
