import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentLink } from '../../gateway/commerce/openapi-paths.ts';
import { LINK_METADATA_BYTES } from '../../gateway/commerce/link-input.ts';
import { dashClient } from '../dashboard/harness.ts';
import { waitFor } from '../helpers/backends.ts';
import { startLinkHarness, type Json, type LinkHarness } from './harness.ts';

/**
 * Payment links end to end on the running service (DESIGN §7 "Payment links"; spec routes
 * `/p/{merchant}/{slug}`, `/l/{code}`, limit "Payment-link unit hold 30 minutes"): the API,
 * the pages, holds taken and returned, and a late payment on a released hold with no unit
 * left ending OVERSOLD and flagged on the link.
 */
let t: LinkHarness;
let live: string;

beforeAll(async () => {
  t = await startLinkHarness();
  live = t.merchant.keys.live.secret;
}, 120_000);
afterAll(() => t?.close());

const create = (body: Json, key = live) => t.api('POST', '/api/v1/payment-links', key, body);
const pathOf = (url: unknown) => new URL(String(url)).pathname;

describe('payment links', () => {
  it('API: create, retrieve, list, deactivate, with the error envelope for bad input (DESIGN §7 JSON names)', async () => {
    const r = await create({ slug: 'mug', title: 'Mug', description: 'A mug.', amount: '2.5', units_total: 3, metadata: { sku: 'M1' } }, live);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ object: 'payment_link', mode: 'live', slug: 'mug', title: 'Mug', amount: '2.5', currency: 'ANM', units_total: 3, units_held: 0, units_sold: 0, active: true, metadata: { sku: 'M1' } });
    expect(r.body.id).toMatch(/^plink_[a-z2-7]{24}$/);
    // The object the OpenAPI document describes, field for field.
    expect(PaymentLink.safeParse(r.body).error).toBeUndefined();
    expect(r.body.code).toMatch(/^[a-z2-7]{8}$/);
    expect(pathOf(r.body.url)).toBe(`/p/${t.merchant.handle}/mug`);
    expect(pathOf(r.body.short_url)).toBe(`/l/${r.body.code as string}`);

    const got = await t.api('GET', `/api/v1/payment-links/${r.body.id as string}`, live);
    expect(got.body).toEqual(r.body);
    const list = await t.api('GET', '/api/v1/payment-links?limit=10', live);
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect((list.body.data as Json[]).map((l) => l.id)).toContain(r.body.id);
    // Scoped to the key's mode and merchant: the test key and another merchant see nothing of it.
    expect((await t.api('GET', `/api/v1/payment-links/${r.body.id as string}`, t.merchant.keys.test.secret)).status).toBe(404);
    const other = await t.h.merchant('Other Shop');
    expect((await t.api('GET', `/api/v1/payment-links/${r.body.id as string}`, other.keys.live.secret)).status).toBe(404);

    const bad: Array<[Json, number, string]> = [
      [{ slug: 'mug', title: 'Again', amount: '1' }, 409, 'slug_taken'],
      [{ slug: 'n', title: 'N', amount: 1 }, 400, 'amount_must_be_string'],
      [{ slug: 'n', title: 'N', amount: '0' }, 400, 'invalid_amount'],
      [{ slug: 'Bad Slug', title: 'N', amount: '1' }, 400, 'invalid_body'],
      [{ slug: 'n', title: '', amount: '1' }, 400, 'invalid_body'],
      [{ slug: 'n', title: 'N', amount: '1', units_total: 0 }, 400, 'invalid_body'],
      [{ slug: 'n', title: 'N', min_amount: '5', max_amount: '1' }, 400, 'invalid_amount'],
      [{ slug: 'n', title: 'N', amount: '1', currency: 'XYZ' }, 400, 'currency_unsupported'],
      [{ slug: 'n', title: 'N', amount: '1', success_url: 'ftp://x' }, 400, 'invalid_url'],
      [{ slug: 'n', title: 'N', amount: '1', colour: 'red' }, 400, 'invalid_body'],
    ];
    for (const [body, status, code] of bad) {
      const res = await create(body);
      expect({ body, status: res.status, code: (res.body.error as Json | undefined)?.code }).toEqual({ body, status, code });
      expect((res.body.error as Json).request_id).toBeTruthy();
    }
    expect((await t.api('POST', '/api/v1/payment-links', 'ask_live_nope', { slug: 'x', title: 'x', amount: '1' })).status).toBe(401);

    const off = await t.api('POST', `/api/v1/payment-links/${r.body.id as string}/deactivate`, live);
    expect(off.body).toMatchObject({ id: r.body.id, active: false });
    // The page of an inactive link is a 404 page, and so is its short link: no redirect to a 404 (DESIGN §7).
    expect((await fetch(`${t.h.svc}/p/${t.merchant.handle}/mug`)).status).toBe(404);
    const short = await fetch(`${t.h.svc}/l/${r.body.code as string}`, { redirect: 'manual' });
    expect({ status: short.status, location: short.headers.get('location') }).toEqual({ status: 404, location: null });
    expect(await short.text()).toContain('Payment link not found');
  });

  it("a link's metadata leaves room for payment_link and hold: the intent's stays within 4096 bytes (ADR 0070)", async () => {
    const sized = (bytes: number) => ({ note: 'x'.repeat(bytes - '{"note":""}'.length) });
    const over = await create({ slug: 'meta-over', title: 'Over', amount: '1', metadata: sized(LINK_METADATA_BYTES + 1) });
    expect({ status: over.status, code: (over.body.error as Json | undefined)?.code }).toEqual({ status: 400, code: 'invalid_metadata' });
    const full = await create({ slug: 'meta-full', title: 'Full', amount: '1', units_total: 5, metadata: sized(LINK_METADATA_BYTES) });
    expect(full.status).toBe(201);
    const paid = await t.pay(`/p/${t.merchant.handle}/meta-full`);
    expect(paid.status).toBe(303);
    const meta = (await t.api('GET', `/api/v1/payment-intents/${paid.location!.slice(3)}`, live)).body.metadata as Json;
    expect(meta).toMatchObject({ payment_link: full.body.id, hold: expect.stringMatching(/^hold_/) as unknown });
    expect(Buffer.byteLength(JSON.stringify(meta))).toBe(4096);
  });

  it('Idempotency-Key on create replays the first response; another body with it is 409', async () => {
    const headers = { 'idempotency-key': 'link-once' };
    const a = await t.api('POST', '/api/v1/payment-links', live, { slug: 'idem', title: 'Idem', amount: '1' }, headers);
    const b = await t.api('POST', '/api/v1/payment-links', live, { slug: 'idem', title: 'Idem', amount: '1' }, headers);
    expect(a.status).toBe(201);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replay')).toBe('true');
    expect(b.body).toEqual(a.body);
    const c = await t.api('POST', '/api/v1/payment-links', live, { slug: 'idem2', title: 'Idem', amount: '1' }, headers);
    expect((c.body.error as Json).code).toBe('idempotency_key_reused');
  });

  it('pages: markup in the title is text; /l/{code} redirects; unknown slug and code are 404 pages', async () => {
    const r = await create({ slug: 'hostile', title: '<img src=x onerror=alert(1)><b>Tee</b>', description: '<script>alert(2)</script>', amount: '1' });
    const page = await fetch(`${t.h.svc}/p/${t.merchant.handle}/hostile`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;Tee&lt;/b&gt;');
    expect(html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>alert');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const short = await fetch(`${t.h.svc}/l/${r.body.code as string}`, { redirect: 'manual' });
    expect(short.status).toBe(302);
    expect(short.headers.get('location')).toBe(`/p/${t.merchant.handle}/hostile`);
    for (const p of [`/p/${t.merchant.handle}/no-such-slug`, '/p/no-such-handle/hostile', '/l/aaaaaaaa', '/l/NOT-A-CODE', `/p/${t.merchant.handle}/Bad%20Slug`]) {
      const res = await fetch(`${t.h.svc}${p}`, { redirect: 'manual' });
      expect({ p, status: res.status, type: res.headers.get('content-type') }).toEqual({ p, status: 404, type: 'text/html; charset=utf-8' });
      expect(await res.text()).toContain('Payment link not found');
    }
    expect((await t.pay(`/p/${t.merchant.handle}/no-such-slug`)).status).toBe(404);
  });

  it('Pay takes a hold and goes to checkout; sold out is a 409 page; a hold released by its timer returns its unit', async () => {
    const r = await create({ slug: 'two', title: 'Two left', amount: '1', units_total: 2 });
    const id = r.body.id as string;
    const p = `/p/${t.merchant.handle}/two`;
    const first = await t.pay(p);
    expect(first.status).toBe(303);
    expect(first.location).toMatch(/^\/c\/pay_[a-z2-7]{24}$/);
    const intentId = first.location!.slice(3);
    const intent = await t.api('GET', `/api/v1/payment-intents/${intentId}`, live);
    expect(intent.body).toMatchObject({ status: 'AWAITING_PAYMENT', anm_amount: '1000000000', description: 'Two left' });
    const meta = intent.body.metadata as Json;
    expect(meta.payment_link).toBe(id);
    expect(meta.hold).toMatch(/^hold_/);
    const hold = await t.waitState(meta.hold as string, 'HELD');
    expect(hold).toMatchObject({ link_id: id, intent_id: intentId });
    // The 30-minute hold is a timer row.
    const timer = await t.h.services.db.query<{ ms: number }>(`SELECT (extract(epoch FROM fire_at) * 1000)::float8 AS ms FROM timers WHERE actor_id = $1 AND name = 'hold'`, [meta.hold as string]);
    expect(Number(timer.rows[0]!.ms) - Number(hold.created_at)).toBe(30 * 60 * 1000);

    expect((await t.pay(p)).status).toBe(303);
    const sold = await t.pay(p);
    expect(sold.status).toBe(409);
    expect(sold.text).toContain('Sold out');
    const page = await (await fetch(`${t.h.svc}${p}`)).text();
    expect(page).toContain('Sold out');
    expect((await t.api('GET', `/api/v1/payment-links/${id}`, live)).body).toMatchObject({ units_held: 2, units_sold: 0, units_left: 0 });

    // The hold's timer comes due: the hold ends RELEASED and the unit is back.
    await t.h.services.db.query(`UPDATE timers SET fire_at = now() WHERE actor_id = $1 AND name = 'hold'`, [meta.hold as string]);
    expect(await t.waitState(meta.hold as string, 'RELEASED')).toMatchObject({ released_reason: 'expired' });
    await waitFor(async () => (await t.api('GET', `/api/v1/payment-links/${id}`, live)).body.units_held === 1, 10_000, 'unit returned');
    expect((await t.pay(p)).status).toBe(303);
  }, 60_000);

  it('a late payment on a released hold with no unit left ends OVERSOLD, flagged on the link', async () => {
    const r = await create({ slug: 'last', title: 'Last one', amount: '1', units_total: 1 });
    const id = r.body.id as string;
    const p = `/p/${t.merchant.handle}/last`;
    const first = await t.pay(p);
    const intentId = first.location!.slice(3);
    const holdId = ((await t.api('GET', `/api/v1/payment-intents/${intentId}`, live)).body.metadata as Json).hold as string;
    await t.waitState(holdId, 'HELD');
    await t.h.services.db.query(`UPDATE timers SET fire_at = now() WHERE actor_id = $1 AND name = 'hold'`, [holdId]);
    await t.waitState(holdId, 'RELEASED');
    // Another buyer takes the returned unit.
    await waitFor(async () => (await t.pay(p)).status === 303, 10_000, 'second buyer');
    // Now the first buyer pays: the payment stands, and there is no unit for it.
    const customer = await t.h.cli(['wallet', 'create', '--network', 'live']);
    await t.h.cli(['wallet', 'fund', customer.address as string, '10000000000', '--network', 'live']);
    await t.h.cli(['wallet', 'pay', intentId, '--wallet', customer.wallet as string]);
    await t.h.cli(['devnet', 'mine', '12', '--network', 'live']);
    await waitFor(async () => (await t.api('GET', `/api/v1/payment-intents/${intentId}`, live)).body.status === 'PAID', 20_000, 'PAID');
    await t.waitState(holdId, 'OVERSOLD', 20_000);
    const link = await waitFor(async () => {
      const l = (await t.api('GET', `/api/v1/payment-links/${id}`, live)).body;
      return l.units_oversold === 1 ? l : null;
    }, 10_000, 'oversold on the link');
    expect(link).toMatchObject({ units_total: 1, units_held: 1, units_sold: 0, units_oversold: 1, oversold_holds: [holdId] });
    // Issue 23 "Dashboard pages to manage links (units left, holds, oversold flags)": the merchant sees the flag and the hold.
    const dash = dashClient(t.h.svc);
    expect((await dash.login(t.merchant.dashboard.email, t.merchant.dashboard.password)).status).toBe(200);
    expect((await dash.req('POST', '/dashboard/api/mode', { mode: 'live' })).status).toBe(200);
    const rows = (await dash.req('GET', '/dashboard/api/links')).json.data as Json[];
    expect(rows.find((l) => l.id === id)).toMatchObject({ units_left: 0, units_oversold: 1, oversold_holds: [holdId] });
    const holds = (await dash.req('GET', `/dashboard/api/links/${id}/holds`)).json.data as Json[];
    expect(holds.find((h) => h.id === holdId)).toMatchObject({ status: 'OVERSOLD' });
  }, 90_000);

  it('a test link answers the public with a 403 page: only its merchant may pay it', async () => {
    await create({ slug: 'test-tee', title: 'Test tee', amount: '1', units_total: 5 }, t.merchant.keys.test.secret);
    const p = `/p/${t.merchant.handle}/test-tee`;
    expect(await (await fetch(`${t.h.svc}${p}`)).text()).toContain('Test link');
    const refused = await t.pay(p);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Test link');
    // Another merchant's session does not pay it either; its own does.
    const { dashClient } = await import('../dashboard/harness.ts');
    const own = dashClient(t.h.svc);
    expect((await own.login(t.merchant.dashboard.email, t.merchant.dashboard.password)).status).toBe(200);
    const paid = await t.pay(p, {}, { cookie: `anm_session=${own.cookie}` });
    expect(paid.status).toBe(303);
    const other = await t.h.merchant('Third Shop');
    const stranger = dashClient(t.h.svc);
    await stranger.login(other.dashboard.email, other.dashboard.password);
    expect((await t.pay(p, {}, { cookie: `anm_session=${stranger.cookie}` })).status).toBe(403);
  });

  it('a customer-chosen amount must lie within the range', async () => {
    await create({ slug: 'tip', title: 'Tip jar', min_amount: '1', max_amount: '10' });
    const p = `/p/${t.merchant.handle}/tip`;
    const low = await t.pay(p, { amount: '0.5' });
    expect(low.status).toBe(400);
    expect(low.text).toContain('Choose an amount from 1 to 10 ANM');
    const ok = await t.pay(p, { amount: '3.25' });
    expect(ok.status).toBe(303);
    const intent = await t.api('GET', `/api/v1/payment-intents/${ok.location!.slice(3)}`, live);
    expect(intent.body.anm_amount).toBe('3250000000');
    // Unlimited: no hold.
    expect((intent.body.metadata as Json).hold).toBeUndefined();
  });

  it('Pay is limited per IP and link: 10 a minute, then a 429 page with Retry-After (DESIGN §7)', async () => {
    await create({ slug: 'busy', title: 'Busy', amount: '1' });
    await create({ slug: 'calm', title: 'Calm', amount: '1' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await t.pay(`/p/${t.merchant.handle}/busy`)).status);
    expect(statuses).toEqual([...Array<number>(10).fill(303), 429]);
    const r = await fetch(`${t.h.svc}/p/${t.merchant.handle}/busy`, { method: 'POST', redirect: 'manual' });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await r.text()).toContain('Too many attempts');
    // Another link from the same IP has its own bucket.
    expect((await t.pay(`/p/${t.merchant.handle}/calm`)).status).toBe(303);
  });
});
