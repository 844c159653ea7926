/**
 * The shop directory and a storefront in Chromium (issue 23 "What must be shown": browser
 * tests with screenshots for the shop directory and storefront, desktop and phone): search by
 * name, open the storefront, follow a product to its payment-link page. Checked with axe-core;
 * shots in test-artifacts/shop/.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashClient, startDashHarness, type DashHarness } from '../dashboard/harness.ts';
import { axe } from './axe.ts';
import { CHROMIUM, skipBrowser } from './harness.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/shop');

let h: DashHarness;
let browser: Browser;
let handle: string;

describe.skipIf(skipBrowser)('shop in Chromium', () => {
  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    h = await startDashHarness({ ANMPAY_SHOP_DIRECTORY: '1' });
    for (const name of ['Harbour Books', 'Hilltop Tea']) {
      const m = await h.merchant(name);
      const c = dashClient(h.svc);
      await c.login(m.dashboard.email, m.dashboard.password);
      const file = `${h.dataDir}/${m.merchant_id}.json`;
      const w = await h.cli(['wallet', 'create', '--network', 'live', '--out', file]);
      await c.req('POST', '/dashboard/api/mode', { mode: 'live' });
      const set = await c.req('POST', '/dashboard/api/payout', { address: w.address });
      const proof = await h.cli(['payout', 'verify', '--challenge', set.json.challenge as string, '--wallet', file]);
      await c.req('POST', '/dashboard/api/payout/verify', { signature: proof.signature });
      await c.req('POST', '/dashboard/api/shop', { listed: true, description: `${name}: <i>since 1999</i>` });
      for (const [slug, title, amount] of [
        ['first', `${name} gift card`, '25'],
        ['second', `${name} sampler`, '9.5'],
      ] as const) {
        const r = await fetch(`${h.svc}/api/v1/payment-links`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.keys.live.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ slug, title, amount, units_total: 5 }),
        });
        expect(r.status).toBe(201);
      }
      if (name === 'Hilltop Tea') handle = ((await c.req('GET', '/dashboard/api/me')).json.merchant as { handle: string }).handle;
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await h?.close();
  });

  it('desktop and phone: the directory, a search by name, the storefront, a product page', { timeout: 120_000 }, async () => {
    for (const [name, viewport] of [
      ['desktop', { width: 1280, height: 800 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      const ctx = await browser.newContext({ viewport, bypassCSP: true, ...(name === 'phone' ? { isMobile: true, hasTouch: true } : {}) });
      const page = await ctx.newPage();
      await page.goto(`${h.svc}/shop`);
      await page.getByRole('link', { name: 'Harbour Books' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-01-directory.png`), fullPage: true });
      await page.getByLabel('Search by name').fill('hilltop');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: 'Hilltop Tea' }).waitFor();
      expect(await page.getByRole('link', { name: 'Harbour Books' }).count()).toBe(0);
      // The description's markup is text.
      await page.getByText('Hilltop Tea: <i>since 1999</i>').waitFor();
      await page.getByRole('link', { name: 'Hilltop Tea' }).click();
      expect(page.url()).toBe(`${h.svc}/shop/${handle}`);
      await page.getByRole('link', { name: 'Hilltop Tea sampler' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-02-storefront.png`), fullPage: true });
      await page.getByRole('link', { name: 'Hilltop Tea sampler' }).click();
      expect(page.url()).toBe(`${h.svc}/p/${handle}/second`);
      await page.getByRole('button', { name: 'Pay' }).waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-03-product.png`), fullPage: true });
      await ctx.close();
    }
  });
});
