/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/**
 * `/api/v1/invoices` and `/i/{token}/pay` over HTTP (DESIGN §7 "Invoices"): the draft and its
 * total, the spec's codes for bad input, Idempotency-Key, numbering under concurrent
 * finalizes, the status rules of finalize / void / mark-uncollectible, list and 404 across
 * merchants, and pay making one intent however many customers press it at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { request, useHarness, type Res } from './harness.ts';

const ITEMS = [{ description: 'Design <b>work</b>', quantity: 3, unit_price: '1.25' }];

describe('conformance: invoices', () => {
  const h = useHarness(undefined, { ANM_RATES: 'USD=0.25' });
  let m: CreatedMerchant;
  const key = () => m.keys.test.secret;
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> => h().req('POST', path, { key: key(), body, headers });
  const get = (path: string, k = key()): Promise<Res> => h().req('GET', path, { key: k });
  const draft = async (body: Record<string, unknown> = {}) => {
    const r = await post('/api/v1/invoices', { line_items: ITEMS, ...body });
    expect(r.status, r.text).toBe(201);
    return r.json;
  };
  const open = async (body: Record<string, unknown> = {}) => (await post(`/api/v1/invoices/${(await draft(body)).id}/finalize`)).json;
  const tokenPath = (inv: { hosted_url: string }) => new URL(inv.hosted_url).pathname;

  beforeAll(async () => {
    m = await h().merchant();
  });

  it('creates a DRAFT with its total, no number and no hosted page yet', async () => {
    const inv = await draft({ customer_name: 'Ada', customer_email: 'ada@example.com', memo: 'Net 30', due_at: '2030-01-31T12:00:00Z', metadata: { po: '77' } });
    expect(inv).toMatchObject({ object: 'invoice', mode: 'test', status: 'DRAFT', number: null, hosted_url: null, total: '3.75', currency: 'ANM', payment_intent: null, overdue: false });
    expect(inv.id).toMatch(/^inv_[a-z2-7]{24}$/);
    expect(inv.due_at).toBe('2030-01-31T12:00:00.000Z');
    expect(inv.line_items).toEqual(ITEMS);
  });

  // DESIGN §7 "Invoices": due_at is an RFC 3339 date-time, or a date due at its end (UTC). A
  // day the month lacks is a mistake to refuse, not a date to roll into the next month.
  it.each<[string, string]>([
    ['2030-02-28', '2030-02-28T23:59:59.000Z'],
    ['2028-02-29', '2028-02-29T23:59:59.000Z'],
    ['2030-02-29', '400 invalid_body'],
    ['2030-02-30', '400 invalid_body'],
    ['2030-04-30', '2030-04-30T23:59:59.000Z'],
    ['2030-04-31', '400 invalid_body'],
    ['2030-12-31', '2030-12-31T23:59:59.000Z'],
    ['2030-13-01', '400 invalid_body'],
    ['2030-00-10', '400 invalid_body'],
    ['2030-01-00', '400 invalid_body'],
    ['2030-02-28T10:00:00Z', '2030-02-28T10:00:00.000Z'],
    ['2028-02-29T10:00:00+02:00', '2028-02-29T08:00:00.000Z'],
    ['2030-02-29T10:00:00Z', '400 invalid_body'],
    ['2030-02-30T10:00:00Z', '400 invalid_body'],
    ['2030-04-31T00:00:00+02:00', '400 invalid_body'],
    ['2030-02-28T24:00:00Z', '400 invalid_body'],
    ['2030-02-28T23:60:00Z', '400 invalid_body'],
    ['2030-02-28T23:59:60Z', '400 invalid_body'],
    ['2030-02-28T10:00:00+24:00', '400 invalid_body'],
  ])('due_at %s → %s', async (due, want) => {
    const r = await post('/api/v1/invoices', { line_items: ITEMS, due_at: due });
    expect(r.status === 201 ? r.json.due_at : `${r.status} ${r.json.error.code}`).toBe(want);
  });

  it('bad input answers the spec codes, never a 500', async () => {
    const code = async (body: unknown) => {
      const r = await post('/api/v1/invoices', body);
      return `${r.status} ${r.json?.error?.code}`;
    };
    expect(await code({ line_items: [{ description: 'x', quantity: 1, unit_price: 5 }] })).toBe('400 amount_must_be_string');
    expect(await code({ line_items: [{ description: 'x', quantity: 1, unit_price: '0.0000000001' }] })).toBe('400 invalid_amount');
    expect(await code({ line_items: [{ description: 'x', quantity: 1, unit_price: '0' }] })).toBe('400 invalid_amount');
    expect(await code({ currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_price: '1.005' }] })).toBe('400 invalid_amount');
    expect(await code({ line_items: [] })).toBe('400 invalid_body');
    expect(await code({ line_items: [{ description: 'x', quantity: 0, unit_price: '1' }] })).toBe('400 invalid_body');
    expect(await code({ line_items: [{ description: 'x', quantity: 1.5, unit_price: '1' }] })).toBe('400 invalid_body');
    expect(await code({ line_items: ITEMS, status: 'PAID' })).toBe('400 invalid_body');
    expect(await code({ line_items: ITEMS, due_at: 'tomorrow' })).toBe('400 invalid_body');
    expect(await code({ line_items: ITEMS, customer_email: 'not-an-email' })).toBe('400 invalid_body');
    expect(await code({ line_items: ITEMS, currency: 'EUR' })).toBe('400 currency_unsupported');
    expect(await code({ line_items: ITEMS, metadata: { big: 'x'.repeat(5000) } })).toBe('400 invalid_metadata');
    expect(await code([1, 2])).toBe('400 invalid_body');
    const anon = await h().req('POST', '/api/v1/invoices', { body: { line_items: ITEMS } });
    expect(anon.status).toBe(401);
  });

  it('Idempotency-Key: the same body replays the same invoice, another body is 409', async () => {
    const headers = { 'idempotency-key': `inv-${Date.now()}` };
    const a = await post('/api/v1/invoices', { line_items: ITEMS }, headers);
    const b = await post('/api/v1/invoices', { line_items: ITEMS }, headers);
    expect(a.status).toBe(201);
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replay']).toBe('true');
    expect(b.json.id).toBe(a.json.id);
    const c = await post('/api/v1/invoices', { line_items: [{ ...ITEMS[0], quantity: 4 }] }, headers);
    expect(c.status).toBe(409);
    expect(c.json.error.code).toBe('idempotency_key_reused');
  });

  it('numbers are per merchant, never repeated by concurrent finalizes', async () => {
    const fresh = await h().merchant();
    const drafts = await Promise.all(
      Array.from({ length: 12 }, async () => (await h().req('POST', '/api/v1/invoices', { key: fresh.keys.test.secret, body: { line_items: ITEMS } })).json.id as string),
    );
    const done = await Promise.all(drafts.map((id) => h().req('POST', `/api/v1/invoices/${id}/finalize`, { key: fresh.keys.test.secret })));
    const numbers = done.map((r) => r.json.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => `INV-${String(i + 1).padStart(4, '0')}`));
    expect(done.every((r) => r.json.status === 'OPEN' && /\/i\/[a-z2-7]{32}$/.test(r.json.hosted_url))).toBe(true);
  });

  it('finalize only a DRAFT, void a DRAFT or OPEN one, mark uncollectible only an OPEN one (409 invalid_invoice_status)', async () => {
    const inv = await open();
    expect((await post(`/api/v1/invoices/${inv.id}/finalize`)).json.error.code).toBe('invalid_invoice_status');
    const un = await post(`/api/v1/invoices/${inv.id}/mark-uncollectible`);
    expect(un.json).toMatchObject({ status: 'UNCOLLECTIBLE' });
    expect(un.json.marked_uncollectible_at).toEqual(expect.any(String));
    const v = await post(`/api/v1/invoices/${inv.id}/void`);
    expect([v.status, v.json.error.code]).toEqual([409, 'invalid_invoice_status']);
    const d = await draft();
    expect((await post(`/api/v1/invoices/${d.id}/mark-uncollectible`)).status).toBe(409);
    expect((await post(`/api/v1/invoices/${d.id}/void`)).json.status).toBe('VOID');
  });

  it.each<[string, string, string]>([
    ['OPEN', 'finalize', 'An OPEN invoice cannot be finalized.'],
    ['UNCOLLECTIBLE', 'void', 'An UNCOLLECTIBLE invoice cannot be voided.'],
    ['UNCOLLECTIBLE', 'finalize', 'An UNCOLLECTIBLE invoice cannot be finalized.'],
    ['DRAFT', 'mark-uncollectible', 'A DRAFT invoice cannot be marked uncollectible.'],
    ['VOID', 'void', 'A VOID invoice cannot be voided.'],
  ])('409 invalid_invoice_status names the status with its article: %s, %s', async (status, cmd, message) => {
    const inv = status === 'DRAFT' || status === 'VOID' ? await draft() : await open();
    if (status === 'UNCOLLECTIBLE') expect((await post(`/api/v1/invoices/${inv.id}/mark-uncollectible`)).status).toBe(200);
    if (status === 'VOID') expect((await post(`/api/v1/invoices/${inv.id}/void`)).status).toBe(200);
    const r = await post(`/api/v1/invoices/${inv.id}/${cmd}`);
    expect([r.status, r.json.error.code, r.json.error.message]).toEqual([409, 'invalid_invoice_status', message]);
  });

  it('a cursor naming no invoice of the merchant says invoice (400 bad_request)', async () => {
    const r = await get(`/api/v1/invoices?starting_after=inv_${'z'.repeat(24)}`);
    expect([r.status, r.json.error.code, r.json.error.message]).toEqual([400, 'bad_request', 'starting_after names no invoice of this merchant and mode']);
  });

  it('lists newest first with a status filter and cursor; another merchant’s id is 404', async () => {
    const a = await open();
    const b = await open();
    const page = await get('/api/v1/invoices?status=OPEN&limit=1');
    expect(page.json).toMatchObject({ object: 'list', has_more: true });
    expect(page.json.data[0].id).toBe(b.id);
    const next = await get(`/api/v1/invoices?status=OPEN&limit=1&starting_after=${b.id}`);
    expect(next.json.data[0].id).toBe(a.id);
    expect((await get('/api/v1/invoices?status=LATE')).json.error.code).toBe('invalid_status');
    expect((await get('/api/v1/invoices?limit=0')).json.error.code).toBe('bad_request');
    const other = await h().merchant();
    expect((await get(`/api/v1/invoices/${a.id}`, other.keys.test.secret)).status).toBe(404);
    expect((await h().req('POST', `/api/v1/invoices/${a.id}/void`, { key: other.keys.test.secret })).status).toBe(404);
    expect((await get('/api/v1/invoices/inv_nope')).status).toBe(404);
  });

  it('pay: many customers pressing Pay at once get one intent; a fiat invoice is charged at the locked rate', async () => {
    const inv = await open({ currency: 'USD', line_items: [{ description: 'Hours', quantity: 5, unit_price: '2.5' }] });
    expect(inv.total).toBe('12.5');
    const pays = await Promise.all(Array.from({ length: 6 }, () => request(h().url, 'POST', `${tokenPath(inv)}/pay`)));
    expect(pays.map((p) => p.status)).toEqual(Array(6).fill(303));
    const targets = new Set(pays.map((p) => p.headers.location));
    expect(targets.size).toBe(1);
    const intentId = [...targets][0]!.replace('/c/', '');
    const after = await get(`/api/v1/invoices/${inv.id}`);
    expect(after.json.payment_intent).toBe(intentId);
    const intent = await get(`/api/v1/payment-intents/${intentId}`);
    // ceil(12.5 / 0.25 × 10^9) nANM, with the invoice named in the metadata.
    expect(intent.json).toMatchObject({ anm_amount: '50000000000', currency: 'USD', requested_amount: '12.5', status: 'AWAITING_PAYMENT', description: `Invoice ${inv.number}` });
    expect(intent.json.metadata).toEqual({ invoice: inv.id, invoice_number: inv.number });
    await post(`/api/v1/invoices/${inv.id}/void`);
    const page = await request(h().url, 'POST', `${tokenPath(inv)}/pay`);
    expect(page.status).toBe(409);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('voided');
  });

  it('the page: 404 for an unknown token, HTML with the security headers, markup as text', async () => {
    const inv = await open();
    const r = await request(h().url, 'GET', tokenPath(inv));
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    expect(r.headers['content-security-policy']).toContain("form-action 'self'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.text).toContain('Design &lt;b&gt;work&lt;/b&gt;');
    expect(r.text).not.toContain('<b>work');
    expect((await request(h().url, 'GET', `/i/${'b'.repeat(32)}`)).status).toBe(404);
    expect((await request(h().url, 'GET', '/i/short')).status).toBe(404);
    expect((await request(h().url, 'POST', `/i/${'b'.repeat(32)}/pay`)).status).toBe(404);
  });
});
