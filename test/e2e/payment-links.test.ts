/**
 * Payment links in Chromium (issue 23 "What must be shown"), on the whole service in-process:
 * a buyer opens a live link's product page (markup in its title shows as text) and presses
 * Pay to reach checkout; the merchant creates a test link on the dashboard's links page, pays
 * it as its merchant, and sees the hold and the units. Desktop and phone screenshots of both
 * pages go to test-artifacts/links/.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLinkHarness, type LinkHarness } from '../commerce/harness.ts';
import { CHROMIUM, skipBrowser } from './harness.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/links');
const MARKUP = '<img src=x onerror="window.__pwned=1"><b>Tee</b> & co';

let t: LinkHarness;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

async function login(ctx: BrowserContext): Promise<Page> {
  await ctx.clearCookies();
  const page = await ctx.newPage();
  await page.goto(`${t.h.svc}/dashboard/login`);
  await page.getByLabel('Email').fill(t.merchant.dashboard.email);
  await page.getByLabel('Password').fill(t.merchant.dashboard.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Setup checklist' }).waitFor();
  return page;
}

describe.skipIf(skipBrowser)('payment links in Chromium', () => {
  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    t = await startLinkHarness();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await t?.close();
  });

  it('the product page shows the title as text and Pay goes to checkout, on desktop and phone', { timeout: 90_000 }, async () => {
    const r = await t.api('POST', '/api/v1/payment-links', t.merchant.keys.live.secret, { slug: 'tee', title: MARKUP, description: 'Organic cotton.\n<i>Not italic</i>', amount: '12.5', units_total: 5 });
    expect(r.status).toBe(201);
    for (const [ctx, name] of [[desktop, 'desktop'], [phone, 'phone']] as const) {
      const page = await ctx.newPage();
      // The short link redirects to the product page.
      await page.goto(r.body.short_url as string);
      expect(new URL(page.url()).pathname).toBe(`/p/${t.merchant.handle}/tee`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(MARKUP);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      await expect(page.locator('.price').textContent()).resolves.toBe('12.5 ANM');
      await expect(page.locator('.units').textContent()).resolves.toBe(name === 'desktop' ? '5 of 5 left' : '4 of 5 left');
      await shot(page, `${name}-link-page`);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.waitForURL(/\/c\/pay_[a-z2-7]{24}$/);
      await page.locator('anm-checkout').waitFor();
      await page.close();
    }
    const link = await t.api('GET', `/api/v1/payment-links/${r.body.id as string}`, t.merchant.keys.live.secret);
    expect(link.body).toMatchObject({ units_held: 2, units_left: 3 });
  });

  it('the dashboard links page: create a test link, pay it as its merchant, see its hold and units', { timeout: 90_000 }, async () => {
    const page = await login(desktop);
    await page.getByRole('link', { name: 'Payment links' }).click();
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();
    await page.getByLabel('Title').fill('Sticker <pack>');
    await page.getByLabel('Slug').fill('stickers');
    await page.getByLabel('Price (ANM)').fill('0.5');
    await page.getByLabel('Units (empty: unlimited)').fill('3');
    await page.getByRole('button', { name: 'Create link' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Sticker <pack>' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('3 left of 3');
    // The public cannot pay a test link; its merchant can, from here.
    const refused = await fetch(`${t.h.svc}/p/${t.merchant.handle}/stickers`, { method: 'POST', redirect: 'manual' });
    expect(refused.status).toBe(403);
    await row.getByRole('button', { name: 'Pay (test)' }).click();
    await page.waitForURL(/\/c\/pay_[a-z2-7]{24}$/);
    await page.goto(`${t.h.svc}/dashboard/links`);
    const again = page.getByRole('row').filter({ hasText: 'Sticker <pack>' });
    await expect(again.textContent()).resolves.toContain('2 left of 3');
    await again.getByRole('button', { name: 'Holds' }).click();
    await page.getByRole('cell', { name: 'HELD', exact: true }).waitFor();
    await shot(page, 'desktop-dashboard-links');

    const small = await login(phone);
    await small.goto(`${t.h.svc}/dashboard/links`);
    await small.getByRole('row').filter({ hasText: 'Sticker <pack>' }).waitFor();
    await shot(small, 'phone-dashboard-links');
  });
});
