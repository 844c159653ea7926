/**
 * Input hardening (issue 26): every input is judged before anything is stored, and every
 * refusal is the spec envelope (spec "Errors", "Limits"). Each case cites the spec line it checks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initialRefundContext } from '../../machines/refund/context.ts';
import type { RefundCreateEvent } from '../../machines/refund/events.ts';
import { HIGH_LIMITS, idem, intentBody, request, useHarness, type ReqOptions, type Res } from './harness.ts';

const EMOJI = '😀'; // one code point, two UTF-16 units, four UTF-8 bytes

function expectRefusal(r: Res, status: number, code: string): void {
  const env = r.json as { error?: { code?: string; request_id?: string } } | undefined;
  expect(r.status, r.text).toBe(status);
  expect(env?.error?.code, r.text).toBe(code);
  expect(env?.error?.request_id).toMatch(/^req_/);
  expect(r.headers['request-id']).toBe(env?.error?.request_id);
}

/** metadata nested `depth` objects deep (an object of scalars is depth 1). */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

describe('conformance: input hardening (issue 26)', () => {
  const h = useHarness(HIGH_LIMITS);
  let key: string;
  let live: string;
  const stored = async () => `${await h().count('actors')}/${await h().count('idempotency_keys')}`;
  beforeAll(async () => {
    const m = await h().merchant();
    key = m.keys.test.secret;
    live = m.keys.live.secret;
  });

  it('Errors "400 invalid_metadata" / Authentication 4: deep metadata is 401 without a key, then 400, never a 500', async () => {
    const before = await stored();
    // Built as text: JSON.stringify itself overflows the stack at this depth.
    const deep = `{"amount":"1","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    expectRefusal(await h().req('POST', '/api/v1/payment-intents', { idem: idem(), body: deep }), 401, 'unauthorized');
    expectRefusal(await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: deep }), 400, 'invalid_metadata');
    expectRefusal(await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: intentBody({ metadata: nested(33) }) }), 400, 'invalid_metadata');
    expect(await stored()).toBe(before);
    expect((await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: intentBody({ metadata: nested(32) }) })).status).toBe(201);
  });

  it('Errors "400 bad_request" / "404 not_found": a bad URL or an over-long id is the envelope, with or without a key', async () => {
    for (const path of ['/api/v1/payment-intents/%ff', '/api/v1/refunds/re_%ff', '/c/%ff', '/c/%ff/payment.json', '/api/v1/payment-intents/%E0%A4%A', '/api/v1/payment-intents/pay_%00']) {
      // The checkout page is HTML, not in the OpenAPI document: its bad URLs are sent unrecorded.
      const send = (m: string, p: string, o: ReqOptions) => (path === '/c/%ff' ? request(h().url, m, p, o) : h().req(m, p, o));
      for (const k of [undefined, key]) expectRefusal(await send('GET', path, { key: k }), 400, 'bad_request');
    }
    // An encoded NUL never reaches a lookup (PostgreSQL refuses NUL in text): found by the boundary fuzz.
    expectRefusal(await request(h().url, 'POST', '/ops/api/merchants/%00/suspend', { headers: { authorization: `Bearer ${h().deps.operatorToken}` } }), 400, 'bad_request');
    const long = 'x'.repeat(5000);
    for (const path of [`/api/v1/payment-intents/${long}`, `/api/v1/refunds/re_${long}`, `/c/${long}/payment.json`, `/api/v1/payment-intents/pay_${long}/cancel`]) {
      for (const k of [undefined, key]) {
        const r = await h().req(path.endsWith('cancel') ? 'POST' : 'GET', path, { key: k });
        expectRefusal(r, 404, 'not_found');
      }
    }
  });

  it('Errors "400 invalid_json": duplicate keys, other media types and invalid UTF-8 are refused and store nothing', async () => {
    const before = await stored();
    const bodies: Array<[string | Buffer, Record<string, string>]> = [
      ['{"amount":"1","amount":"1000000"}', {}],
      ['{"amount":"1","metadata":{"a":1,"a":2}}', {}],
      ['{"amount":"1","\\u0061mount":"2"}', {}],
      ['{"amount":"1"}', { 'content-type': 'text/plain' }],
      ['{"amount":"1"}', { 'content-type': 'application/json; charset=latin1' }],
      ['{"amount":"1"}', { 'content-type': 'application/x-www-form-urlencoded' }],
      [Buffer.from('{"amount":"1","description":"\xff"}', 'latin1'), {}],
      [Buffer.from('{"amount":"1","description":"\xed\xa0\x80"}', 'latin1'), {}],
    ];
    for (const [body, headers] of bodies) {
      expectRefusal(await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body, headers }), 400, 'invalid_json');
    }
    // No Content-Type at all (the harness adds one when there is a body; send raw bytes without it).
    const none = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: '{"amount":"1"}', headers: { 'content-type': '' } });
    expectRefusal(none, 400, 'invalid_json');
    expect(await stored()).toBe(before);
    const ok = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: '{"amount":"1"}', headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(ok.status, ok.text).toBe(201);
  });

  it('Limits "max 500 chars" and friends count characters (code points), not UTF-16 units', async () => {
    const create = (over: Record<string, unknown>, idemKey = idem()) => h().req('POST', '/api/v1/payment-intents', { key, idem: idemKey, body: intentBody(over) });
    expect((await create({ description: EMOJI.repeat(500) })).status).toBe(201);
    expectRefusal(await create({ description: EMOJI.repeat(501) }), 400, 'invalid_body');
    expect((await create({ merchant_order_id: `o${EMOJI.repeat(119)}` })).status).toBe(201);
    expectRefusal(await create({ merchant_order_id: EMOJI.repeat(121) }), 400, 'invalid_body');
    const url = (n: number) => `https://shop.example/${EMOJI.repeat(n - 'https://shop.example/'.length)}`;
    expect((await create({ success_url: url(2048) })).status).toBe(201);
    expectRefusal(await create({ success_url: url(2049) }), 400, 'invalid_url');
    // Idempotency-Key: header bytes are UTF-8; 255 characters pass, 256 do not.
    const header = (n: number) => Buffer.from(EMOJI.repeat(n), 'utf8').toString('latin1');
    expect((await create({}, header(255))).status).toBe(201);
    expectRefusal(await create({}, header(256)), 400, 'bad_request');
    expectRefusal(await create({}, Buffer.from([0xff, 0x41]).toString('latin1')), 400, 'bad_request');
    // A key is its bytes: one that starts with a byte order mark is not the key without it (else: 409 idempotency_key_reused).
    const plain = idem();
    expect((await create({}, plain)).status).toBe(201);
    const marked = await create({ amount: '2' }, Buffer.from(`\uFEFF${plain}`, 'utf8').toString('latin1'));
    expect(marked.status, marked.text).toBe(201);
  });

  describe('refunds (spec "Errors": same key, different body is 409 idempotency_key_reused)', () => {
    let restore: () => void;
    let intentId: string;
    beforeAll(async () => {
      const created = await h().req('POST', '/api/v1/payment-intents', { key: live, idem: idem(), body: intentBody({ amount: '2' }) });
      expect(created.status, created.text).toBe(201);
      intentId = (created.json as { id: string }).id;
      // A PAID intent without a chain: reads see it paid, and the actor writes are stood in for.
      const deps = h().deps;
      const { refunds, host } = deps;
      deps.refunds = Object.assign(Object.create(refunds) as typeof refunds, {
        own: async (...args: Parameters<typeof refunds.own>) => {
          const r = await refunds.own(...args);
          if (!r || args[0] !== 'payment_intent') return r;
          const ctx = r.snapshot.context as Record<string, unknown>;
          const tx = { hash: 'h', from: 'anm1customer', merchant_leg: String(ctx.merchant_amount), fee_leg: '0', block_height: 1, block_hash: 'b', receipt: 'success' };
          return { ...r, state: 'PAID', snapshot: { ...r.snapshot, context: { ...ctx, tx } } };
        },
      });
      deps.host = {
        apply: async (target, event) => {
          const e = event as RefundCreateEvent;
          if (target.kind !== 'refund') return { outcome: 'applied' } as Awaited<ReturnType<typeof host.apply>>;
          return { outcome: 'applied', status: 'REQUIRES_SIGNATURE', snapshot: { context: initialRefundContext({ ...e, created_at: e.at } as RefundCreateEvent) } } as unknown as Awaited<ReturnType<typeof host.apply>>;
        },
      };
      restore = () => Object.assign(deps, { refunds, host });
    });

    it('replays the same body, refuses another reason or amount, and counts reason in characters', async () => {
      try {
        const k = idem();
        const body = { payment_intent: intentId, amount: '0.5', reason: 'damaged' };
        const first = await h().req('POST', '/api/v1/refunds', { key: live, idem: k, body });
        expect(first.status, first.text).toBe(201);
        const again = await h().req('POST', '/api/v1/refunds', { key: live, idem: k, body: { reason: 'damaged', amount_nanm: '500000000', payment_intent: intentId } });
        expect(again.status, again.text).toBe(200);
        expect(again.headers['idempotent-replay']).toBe('true');
        expect(again.text).toBe(first.text);
        expectRefusal(await h().req('POST', '/api/v1/refunds', { key: live, idem: k, body: { ...body, reason: 'changed my mind' } }), 409, 'idempotency_key_reused');
        expectRefusal(await h().req('POST', '/api/v1/refunds', { key: live, idem: k, body: { ...body, amount: '0.6' } }), 409, 'idempotency_key_reused');
        expectRefusal(await h().req('POST', '/api/v1/refunds', { key: live, idem: k, body: { payment_intent: intentId, amount: '0.5' } }), 409, 'idempotency_key_reused');
        expect((await h().req('POST', '/api/v1/refunds', { key: live, idem: idem(), body: { payment_intent: intentId, amount: '0.1', reason: EMOJI.repeat(300) } })).status).toBe(201);
        expectRefusal(await h().req('POST', '/api/v1/refunds', { key: live, idem: idem(), body: { payment_intent: intentId, amount: '0.1', reason: EMOJI.repeat(301) } }), 400, 'invalid_request');
        // A refused refund (test mode) leaves its key free.
        const before = await h().count('idempotency_keys');
        expectRefusal(await h().req('POST', '/api/v1/refunds', { key, idem: idem(), body }), 403, 'forbidden');
        expect(await h().count('idempotency_keys')).toBe(before);
      } finally {
        restore();
      }
    });
  });
});
