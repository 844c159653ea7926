/**
 * The shop directory and storefronts (DESIGN §7 "Shop"; spec Endpoints `/shop`,
 * `/shop/{merchant}`: "opt-in directory (off by default) and single storefront; listing
 * requires a verified payout address") over real HTTP on the whole service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from '../dashboard/harness.ts';

let h: DashHarness;
let a: CreatedMerchant;
let ca: DashClient;
const MARKUP = '<img src=x onerror=alert(1)><b>Bold</b>';

async function link(key: string, body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${h.svc}/api/v1/payment-links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status !== 201) throw new Error(`link: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { id: string }).id;
}

/** The merchant's live payout address, verified with the signature the CLI prints. */
async function verifyLivePayout(c: DashClient, name: string): Promise<void> {
  const file = `${h.dataDir}/${name}-live-payout.json`;
  const w = await h.cli(['wallet', 'create', '--network', 'live', '--out', file]);
  await c.req('POST', '/dashboard/api/mode', { mode: 'live' });
  const set = await c.req('POST', '/dashboard/api/payout', { address: w.address });
  const proof = await h.cli(['payout', 'verify', '--challenge', set.json.challenge as string, '--wallet', file]);
  expect((await c.req('POST', '/dashboard/api/payout/verify', { signature: proof.signature })).status).toBe(200);
  await c.req('POST', '/dashboard/api/mode', { mode: 'test' });
}

const page = async (p: string) => {
  const r = await fetch(`${h.svc}${p}`);
  return { status: r.status, text: await r.text() };
};

describe('shop directory on (ANMPAY_SHOP_DIRECTORY=1)', () => {
  beforeAll(async () => {
    h = await startDashHarness({ ANMPAY_SHOP_DIRECTORY: '1' });
    a = await h.merchant(`Tea ${MARKUP} House`);
    ca = dashClient(h.svc);
    await ca.login(a.dashboard.email, a.dashboard.password);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  it('DESIGN §7: a merchant is listed only after opting in AND verifying its live payout address', async () => {
    const handle = ((await ca.req('GET', '/dashboard/api/me')).json.merchant as { handle: string }).handle;
    expect((await page('/shop')).text).not.toContain(`/shop/${handle}"`);
    const optIn = await ca.req('POST', '/dashboard/api/shop', { listed: true, description: `Loose leaf ${MARKUP}` });
    expect(optIn.json).toMatchObject({ listed: true, visible: false, directory_enabled: true });
    // Opted in, payout not verified: neither the directory nor the storefront shows it.
    expect((await page('/shop')).text).not.toContain(`/shop/${handle}"`);
    expect((await page(`/shop/${handle}`)).status).toBe(404);
    await verifyLivePayout(ca, 'tea');
    expect((await ca.req('GET', '/dashboard/api/shop')).json).toMatchObject({ listed: true, visible: true });
    const dir = await page('/shop');
    expect(dir.text).toContain(`href="/shop/${handle}"`);
    // Markup in the name and description is text.
    expect(dir.text).toContain('&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;Bold&lt;/b&gt;');
    expect(dir.text).not.toContain('<img src=x');
    // Search by name, any case; `%` is literal, not a wildcard.
    expect((await page('/shop?q=tEA')).text).toContain(`/shop/${handle}"`);
    expect((await page('/shop?q=coffee')).text).not.toContain(`/shop/${handle}"`);
    expect((await page('/shop?q=%25')).text).not.toContain(`/shop/${handle}"`);
    // Opting out takes it off at once.
    await ca.req('POST', '/dashboard/api/shop', { listed: false, description: '' });
    expect((await page('/shop')).text).not.toContain(`/shop/${handle}"`);
    await ca.req('POST', '/dashboard/api/shop', { listed: true, description: 'Loose leaf' });
  });

  it('the storefront shows the active live payment links only (not test, not deactivated), each to its product page', async () => {
    const handle = ((await ca.req('GET', '/dashboard/api/me')).json.merchant as { handle: string }).handle;
    await link(a.keys.live.secret, { slug: 'sencha', title: `Sencha ${MARKUP}`, amount: '12.5', units_total: 3 });
    const gone = await link(a.keys.live.secret, { slug: 'old-tin', title: 'Old tin', amount: '1' });
    await link(a.keys.test.secret, { slug: 'test-only', title: 'Test only', amount: '1' });
    await fetch(`${h.svc}/api/v1/payment-links/${gone}/deactivate`, { method: 'POST', headers: { authorization: `Bearer ${a.keys.live.secret}` } });
    const front = await page(`/shop/${handle}`);
    expect(front.status).toBe(200);
    expect(front.text).toContain(`href="/p/${handle}/sencha"`);
    expect(front.text).toContain('12.5 ANM');
    expect(front.text).toContain('3 left');
    expect(front.text).toContain('Sencha &lt;img');
    expect(front.text).not.toContain('old-tin');
    expect(front.text).not.toContain('test-only');
    expect((await page('/shop')).text).toMatch(/1 product</);
  });

  it('bad input: unknown or malformed handles are 404 pages; CSRF guards the opt-in; a long description is 400', async () => {
    for (const p of ['/shop/no-such-shop', '/shop/%00', '/shop/UPPER', `/shop/${'a'.repeat(300)}`]) expect((await page(p)).status, p).toBe(p.includes('%00') ? 400 : 404);
    expect((await ca.req('POST', '/dashboard/api/shop', { listed: true }, { csrf: null })).json.error?.code).toBe('csrf_failed');
    expect((await ca.req('POST', '/dashboard/api/shop', { listed: true, description: 'x'.repeat(301) })).json.error?.code).toBe('invalid_body');
    expect((await ca.req('POST', '/dashboard/api/shop', { listed: 'yes' })).json.error?.code).toBe('invalid_body');
  });
});

describe('shop directory off (the default)', () => {
  it('spec Endpoints: /shop lists nothing and says so, even with an opted-in, verified merchant', { timeout: 120_000 }, async () => {
    h = await startDashHarness();
    try {
      const m = await h.merchant('Quiet Shop');
      const c = dashClient(h.svc);
      await c.login(m.dashboard.email, m.dashboard.password);
      await verifyLivePayout(c, 'quiet');
      expect((await c.req('POST', '/dashboard/api/shop', { listed: true })).json).toMatchObject({ visible: true, directory_enabled: false });
      const dir = await page('/shop');
      expect(dir.status).toBe(200);
      expect(dir.text).toContain('The shop directory is not enabled on this service.');
      expect(dir.text).not.toContain('Quiet Shop');
    } finally {
      await h.close();
    }
  });
});
