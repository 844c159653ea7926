/**
 * The point of sale's routes over real HTTP on the whole service (real PostgreSQL + NATS when
 * reachable). Each case names the rule it checks: spec Endpoints (`GET /pos`, dashboard
 * session), Authentication 8 (cookie session with CSRF), DESIGN §7 "Point of sale".
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { waitFor } from '../helpers/backends.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from '../dashboard/harness.ts';

let h: DashHarness;
let a: CreatedMerchant;
let b: CreatedMerchant;
let ca: DashClient;

interface Checkout {
  intent: { id: string; anm_amount: string; description: string | null; mode: string };
  status: { status: string };
  events_url: string;
}

beforeAll(async () => {
  h = await startDashHarness({ ANM_RATES: 'USD=0.25,EUR=0.23' });
  a = await h.merchant('Till A');
  b = await h.merchant('Till B');
  ca = dashClient(h.svc);
  expect((await ca.login(a.dashboard.email, a.dashboard.password)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const sale = () => `sale_${Math.random().toString(36).slice(2, 12)}`;

describe('point of sale (DESIGN §7 "Point of sale")', () => {
  it('spec Endpoints: /pos needs a dashboard session (303 to the login), then serves the till with ANM and the quoted currencies', async () => {
    const anon = await fetch(`${h.svc}/pos`, { redirect: 'manual' });
    expect(anon.status).toBe(303);
    expect(anon.headers.get('location')).toBe('/dashboard/login');
    const page = await ca.req('GET', '/pos');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const data = JSON.parse(/<script type="application\/json" id="anm-pos-data">(.*?)<\/script>/s.exec(page.text)![1]!) as { currencies: string[]; mode: string };
    expect(data.currencies).toEqual(['ANM', 'USD', 'EUR']);
    expect(data.mode).toBe('test');
  });

  it('DESIGN §7: the session cookie is set on /dashboard, /pos and /p (test-mode links) only, never on / (so never sent to /api/v1)', async () => {
    const c = dashClient(h.svc);
    const form = await c.req('GET', '/dashboard/login');
    c.csrf = /"csrf":"([^"]+)"/.exec(form.text)![1]!;
    const r = await fetch(`${h.svc}/dashboard/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: h.svc, cookie: `anm_session=${c.cookie}`, 'x-csrf-token': c.csrf },
      body: JSON.stringify({ email: a.dashboard.email, password: a.dashboard.password }),
    });
    expect(r.status).toBe(200);
    const paths = r.headers.getSetCookie().filter((x) => x.startsWith('anm_session=')).map((x) => /Path=([^;]+)/i.exec(x)?.[1]);
    expect(paths.sort()).toEqual(['/dashboard', '/p', '/pos']);
  });

  it('spec Authentication 8: a charge without the CSRF token, from a foreign Origin, or with an API key is refused; nothing is created', async () => {
    const before = (await ca.req('GET', '/pos/api/sales')).json.totals as { count: number };
    const body = { sale_id: sale(), amount: '1', currency: 'ANM' };
    expect((await ca.req('POST', '/pos/api/charge', body, { csrf: null })).json.error?.code).toBe('csrf_failed');
    expect((await ca.req('POST', '/pos/api/charge', body, { origin: 'https://evil.example' })).json.error?.code).toBe('csrf_failed');
    const keyed = await fetch(`${h.svc}/pos/api/sales`, { headers: { authorization: `Bearer ${a.keys.test.secret}` } });
    expect(keyed.status).toBe(401);
    expect(((await ca.req('GET', '/pos/api/sales')).json.totals as { count: number }).count).toBe(before.count);
  });

  it('a charge is the API\'s intent in the session\'s mode (metadata source pos, the note as description); the same sale id charges once', async () => {
    const id = sale();
    const first = await ca.req('POST', '/pos/api/charge', { sale_id: id, amount: '2.5', currency: 'ANM', note: '<b>table 4</b>' });
    expect(first.status).toBe(201);
    const co = first.json.checkout as Checkout;
    expect(co.intent.anm_amount).toBe('2500000000');
    expect(co.intent.mode).toBe('test');
    expect(co.status.status).toBe('AWAITING_PAYMENT');
    expect(co.events_url).toMatch(new RegExp(`^/c/${co.intent.id}/events\\?last_event_id=\\d+$`));
    const again = await ca.req('POST', '/pos/api/charge', { sale_id: id, amount: '2.5', currency: 'ANM', note: '<b>table 4</b>' });
    expect(again.status).toBe(200);
    expect((again.json.checkout as Checkout).intent.id).toBe(co.intent.id);
    const api = (await (await fetch(`${h.svc}/api/v1/payment-intents/${co.intent.id}`, { headers: { authorization: `Bearer ${a.keys.test.secret}` } })).json()) as { metadata: unknown; description: string };
    expect(api.metadata).toEqual({ source: 'pos' });
    expect(api.description).toBe('<b>table 4</b>');
  });

  it('DESIGN §4 Fiat: a USD amount is quoted from the rate source (10.00 USD at 0.25 = 40 ANM)', async () => {
    const r = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), amount: '10.00', currency: 'USD' });
    expect(r.status).toBe(201);
    expect((r.json.checkout as Checkout).intent.anm_amount).toBe('40000000000');
  });

  it.each([
    [{ amount: 'abc', currency: 'ANM' }, 'invalid_amount'],
    [{ amount: '1', currency: 'GBP' }, 'currency_unsupported'],
    // Spec: "A JSON number is refused with 400 amount_must_be_string", at the till as on the API.
    [{ amount: 1, currency: 'ANM' }, 'amount_must_be_string'],
    [{ amount: 2.5, currency: 'ANM', note: 'x'.repeat(501) }, 'amount_must_be_string'],
    [{ amount: '1', currency: 'ANM', extra: true }, 'invalid_body'],
    [{ amount: '1', currency: 'ANM', sale_id: 'short' }, 'invalid_body'],
    [{ amount: '1', currency: 'ANM', note: 'x'.repeat(501) }, 'invalid_body'],
  ])('bad input %j is 400 %s and creates nothing', async (body, code) => {
    const before = ((await ca.req('GET', '/pos/api/sales')).json.totals as { count: number }).count;
    const r = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), ...body });
    expect(r.status).toBe(400);
    expect(r.json.error?.code).toBe(code);
    expect(((await ca.req('GET', '/pos/api/sales')).json.totals as { count: number }).count).toBe(before);
  });

  it("today's sales: the till's own, newest first, with paid totals that follow the chain; another merchant sees none of them", async () => {
    const made = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), amount: '3', currency: 'ANM', note: 'paid one' });
    const co = made.json.checkout as Checkout;
    const day = await ca.req('GET', '/pos/api/sales');
    const list = day.json.data as Array<{ id: string; metadata: unknown }>;
    expect(list[0]!.id).toBe(co.intent.id);
    expect(list.every((s) => (s.metadata as { source?: string }).source === 'pos')).toBe(true);
    const paidBefore = day.json.totals as { paid_count: number; paid_anm: string };
    const wallet = path.join(h.dataDir, 'till-payer.json');
    const w = await h.cli(['wallet', 'create', '--out', wallet]);
    await h.cli(['wallet', 'fund', String(w.address), '100000000000']);
    await h.cli(['wallet', 'pay', co.intent.id, '--wallet', wallet]);
    await h.cli(['devnet', 'mine', '12']);
    await waitFor(async () => ((await ca.req('GET', '/pos/api/sales')).json.totals as { paid_count: number }).paid_count === paidBefore.paid_count + 1, 20_000, 'paid');
    const after = (await ca.req('GET', '/pos/api/sales')).json.totals as { paid_anm: string; paid_anm_formatted: string };
    expect(BigInt(after.paid_anm) - BigInt(paidBefore.paid_anm)).toBe(3_000_000_000n);
    const cb = dashClient(h.svc);
    await cb.login(b.dashboard.email, b.dashboard.password);
    const theirs = await cb.req('GET', '/pos/api/sales');
    expect((theirs.json.totals as { count: number }).count).toBe(0);
    // A till's "since" never reaches back more than a day.
    const old = await ca.req('GET', `/pos/api/sales?since=${encodeURIComponent('2000-01-01T00:00:00Z')}`);
    expect(Date.parse(old.json.since as string)).toBeGreaterThan(Date.now() - 86_400_000 - 60_000);
    expect((await ca.req('GET', '/pos/api/sales?since=yesterday')).status).toBe(400);
  });

  it('DESIGN §7: the product grid is the mode\'s active fixed-price links (limited ones with their units left); a cart is priced from the links, never from the browser', async () => {
    const link = async (key: string, body: Record<string, unknown>) => {
      const r = await fetch(`${h.svc}/api/v1/payment-links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(r.status).toBe(201);
      return ((await r.json()) as { id: string }).id;
    };
    const test = a.keys.test.secret;
    const coffee = await link(test, { slug: 'coffee', title: 'Coffee', amount: '2.5' });
    const cake = await link(test, { slug: 'cake', title: 'Cake', amount: '4' });
    const usd = await link(test, { slug: 'usd-card', title: 'Card', amount: '3', currency: 'USD' });
    const mug = await link(test, { slug: 'mug', title: 'Mug', amount: '10', units_total: 3 });
    const tip = await link(test, { slug: 'tip', title: 'Tip', min_amount: '1', max_amount: '5' });
    const old = await link(test, { slug: 'old', title: 'Old', amount: '1' });
    await fetch(`${h.svc}/api/v1/payment-links/${old}/deactivate`, { method: 'POST', headers: { authorization: `Bearer ${test}` } });
    await link(a.keys.live.secret, { slug: 'live-only', title: 'Live only', amount: '1' });
    const grid = (await ca.req('GET', '/pos/api/products')).json.data as Array<{ link: string; title: string; amount: string; currency: string; units_left: number | null }>;
    expect(grid.map((p) => p.link).sort()).toEqual([coffee, cake, usd, mug].sort());
    expect(grid.find((p) => p.link === mug)?.units_left).toBe(3);
    expect(grid.find((p) => p.link === coffee)?.units_left).toBeNull();
    const r = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), items: [{ link: coffee, quantity: 2 }, { link: cake, quantity: 1 }], note: 'to go' });
    expect(r.status).toBe(201);
    const co = r.json.checkout as Checkout;
    expect(co.intent.anm_amount).toBe('9000000000');
    expect(co.intent.description).toBe('2 × Coffee, 1 × Cake · to go');
    const api = (await (await fetch(`${h.svc}/api/v1/payment-intents/${co.intent.id}`, { headers: { authorization: `Bearer ${test}` } })).json()) as { metadata: unknown };
    expect(api.metadata).toEqual({ source: 'pos', cart: [{ link: coffee, quantity: 2 }, { link: cake, quantity: 1 }] });
    for (const [items, extra] of [
      [[{ link: tip, quantity: 1 }], {}],
      [[{ link: mug, quantity: 21 }], {}],
      [[{ link: old, quantity: 1 }], {}],
      [[{ link: coffee, quantity: 1 }, { link: usd, quantity: 1 }], {}],
      [[{ link: coffee, quantity: 1 }], { amount: '1', currency: 'ANM' }],
      [[], {}],
      [[{ link: coffee, quantity: 0 }], {}],
    ] as const) {
      const bad = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), items, ...extra });
      expect(bad.json.error?.code, JSON.stringify(items)).toBe('invalid_body');
    }
  });

  it('ADR 0048: a cart takes a hold per unit of a limited product, as the Pay page does: the link counts them, the last unit goes to one sale, a refused sale hands its units back, and the holds follow the payment', { timeout: 60_000 }, async () => {
    const test = a.keys.test.secret;
    const mk = async (body: Record<string, unknown>) => {
      const r = await fetch(`${h.svc}/api/v1/payment-links`, { method: 'POST', headers: { authorization: `Bearer ${test}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(r.status).toBe(201);
      return ((await r.json()) as { id: string }).id;
    };
    const counts = async (id: string) =>
      (await (await fetch(`${h.svc}/api/v1/payment-links/${id}`, { headers: { authorization: `Bearer ${test}` } })).json()) as { units_held: number; units_sold: number };
    const left = async (id: string) => ((await ca.req('GET', '/pos/api/products')).json.data as Array<{ link: string; units_left: number | null }>).find((p) => p.link === id)?.units_left;
    const scarf = await mk({ slug: 'scarf', title: 'Scarf', amount: '5', units_total: 2 });
    const hat = await mk({ slug: 'hat', title: 'Hat', amount: '7', units_total: 1 });
    const pin = await mk({ slug: 'pin', title: 'Pin', amount: '1', units_total: 3 });
    const tea = await mk({ slug: 'tea', title: 'Tea', amount: '2' });

    const first = sale();
    const one = await ca.req('POST', '/pos/api/charge', { sale_id: first, items: [{ link: scarf, quantity: 1 }, { link: tea, quantity: 1 }] });
    expect(one.status).toBe(201);
    const co = one.json.checkout as Checkout;
    expect(co.intent.anm_amount).toBe('7000000000');
    expect(await counts(scarf)).toMatchObject({ units_held: 1, units_sold: 0 });
    expect(await left(scarf)).toBe(1);
    const meta = ((await (await fetch(`${h.svc}/api/v1/payment-intents/${co.intent.id}`, { headers: { authorization: `Bearer ${test}` } })).json()) as { metadata: { holds: string[] } }).metadata;
    expect(meta.holds).toHaveLength(1);
    // The same sale again (a second tap, a retry): the same intent and the same hold, no second unit.
    const again = await ca.req('POST', '/pos/api/charge', { sale_id: first, items: [{ link: scarf, quantity: 1 }, { link: tea, quantity: 1 }] });
    expect(again.status).toBe(200);
    expect((again.json.checkout as Checkout).intent.id).toBe(co.intent.id);
    expect(await counts(scarf)).toMatchObject({ units_held: 1 });

    // The last scarf and the only hat go to one sale; the next buyer of the hat is refused.
    expect((await ca.req('POST', '/pos/api/charge', { sale_id: sale(), items: [{ link: scarf, quantity: 1 }, { link: hat, quantity: 1 }] })).status).toBe(201);
    expect(await left(scarf)).toBe(0);
    const gone = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), items: [{ link: hat, quantity: 1 }] });
    expect(gone.status).toBe(409);
    expect(gone.json.error).toMatchObject({ code: 'sold_out' });
    expect(gone.json.error?.message).toContain('Hat');

    // Two pins are taken before the hat is found gone: the sale is refused and the pins come back.
    const before = ((await ca.req('GET', '/pos/api/sales')).json.totals as { count: number }).count;
    const partial = await ca.req('POST', '/pos/api/charge', { sale_id: sale(), items: [{ link: pin, quantity: 2 }, { link: hat, quantity: 1 }] });
    expect(partial.json.error?.code).toBe('sold_out');
    await waitFor(async () => (await counts(pin)).units_held === 0, 20_000, 'pins handed back');
    expect(await left(pin)).toBe(3);
    expect(((await ca.req('GET', '/pos/api/sales')).json.totals as { count: number }).count).toBe(before);

    // The first sale is paid: its hold is consumed, the scarf is sold (the other stays held).
    const wallet = path.join(h.dataDir, 'cart-payer.json');
    const w = await h.cli(['wallet', 'create', '--out', wallet]);
    await h.cli(['wallet', 'fund', String(w.address), '100000000000']);
    await h.cli(['wallet', 'pay', co.intent.id, '--wallet', wallet]);
    await h.cli(['devnet', 'mine', '12']);
    await waitFor(async () => (await counts(scarf)).units_sold === 1, 20_000, 'scarf sold');
    expect(await counts(scarf)).toMatchObject({ units_held: 1, units_sold: 1 });
  });
});
