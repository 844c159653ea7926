/**
 * Issue 22 item 3 in headless Chromium: the first start's demo merchant embeds its TEST
 * checkout with widget.js from a page on any local port (`http://localhost:*`,
 * `http://127.0.0.1:*`) with no origin set up by hand; a LIVE intent is never framed there.
 * Harness: ./harness.ts (its own merchant is not used here). Screenshots in test-artifacts/e2e/.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { shot, skipBrowser, startCheckoutE2e, type CheckoutE2e } from './harness.ts';
import { merchantPage } from './merchant-page.ts';

let e: CheckoutE2e;
let demo: string;
const sites: Server[] = [];

type Win = { events: Array<{ t: string; status: string }>; openCheckout(id: string): boolean };

/** A merchant page with widget.js and `publishableKey`, on a port the OS picks. */
async function localSite(publishableKey: string): Promise<number> {
  const s = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(merchantPage(e.svc, publishableKey)));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  sites.push(s);
  return (s.address() as AddressInfo).port;
}

const op = async (p: string, body: unknown): Promise<Record<string, unknown>> => {
  const r = await fetch(`${e.svc}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e.services.config.ANMPAY_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
};
const key = async (mode: 'test' | 'live', kind: 'secret' | 'publishable') => String((await op(`/ops/api/merchants/${demo}/keys`, { mode, kind })).key);

describe.skipIf(skipBrowser)('the demo merchant’s widget on a local page, out of the box', () => {
  beforeAll(async () => {
    e = await startCheckoutE2e();
    demo = (await e.services.db.query<{ id: string }>(`SELECT id FROM merchants WHERE email = 'demo@anmpay.local'`)).rows[0]!.id;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(sites.map((s) => new Promise<void>((r) => s.close(() => r()))));
    await e?.close();
  }, 60_000);

  it.each(['localhost', '127.0.0.1'])('a test intent opens and talks to a page on http://%s:<random port>', { timeout: 60_000 }, async (host) => {
    const intent = await e.api('POST', '/api/v1/payment-intents', { amount: '2', description: 'Local demo' }, await key('test', 'secret'));
    const port = await localSite(await key('test', 'publishable'));
    const page = await e.ctx.newPage();
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    await page.goto(`http://${host}:${port}/`);
    expect(await page.evaluate((id) => (window as unknown as Win).openCheckout(id), String(intent.id))).toBe(true);
    // A status message only arrives after the page accepted the widget's hello from this origin.
    await page.waitForFunction(() => (window as unknown as Win).events.some((x) => x.t === 'status' && x.status === 'AWAITING_PAYMENT'), undefined, { timeout: 20_000 });
    await page.frameLocator('iframe[title="ANM Pay checkout"]').locator('anm-status section[data-status="AWAITING_PAYMENT"]').waitFor();
    expect(errors.filter((x) => x.includes('[ANM Pay widget]'))).toEqual([]);
    await shot(page, `30-widget-demo-${host === 'localhost' ? 'localhost' : 'loopback'}`);
    await page.close();
  });

  it('a live intent of the same merchant is refused on that page: 404 embed, no status, the widget says why', { timeout: 60_000 }, async () => {
    await op(`/ops/api/merchants/${demo}/payout`, { mode: 'live', address: generateWallet('live').address });
    const intent = await e.api('POST', '/api/v1/payment-intents', { amount: '2' }, await key('live', 'secret'));
    const port = await localSite(await key('live', 'publishable'));
    const page = await e.ctx.newPage();
    const errors: string[] = [];
    const embeds: number[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('response', (r) => void (r.url().includes(`/c/${String(intent.id)}?embed=1`) && embeds.push(r.status())));
    await page.goto(`http://localhost:${port}/`);
    expect(await page.evaluate((id) => (window as unknown as Win).openCheckout(id), String(intent.id))).toBe(true);
    await expect.poll(() => errors.some((x) => x.includes('[ANM Pay widget]')), { timeout: 15_000 }).toBe(true);
    expect(embeds).toEqual([404]);
    expect(await page.evaluate(() => (window as unknown as Win).events.filter((x) => x.t === 'status'))).toEqual([]);
    await shot(page, '31-widget-demo-live-refused');
    await page.close();
  });
});
