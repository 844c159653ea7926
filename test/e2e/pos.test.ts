/**
 * The point of sale in Chromium (issue 23 "What must be shown": POS keypad to PAID), on the
 * whole service started in-process: log in, open /pos, key an amount in on the keypad with a
 * note carrying markup, charge, see the checkout's QR code and live status, the CLI pays, the
 * till shows PAID and "New sale", today's totals count it. A USD sale is quoted from the rate
 * source. Limited products show their units left; one sold elsewhere while it sits in the cart
 * is refused with a message and greys out. Today's table stays inside its panel on a tablet
 * either way up, long notes and amounts included. Checked with axe-core; shot on a tablet
 * (full screen), a desktop and a phone into test-artifacts/pos/.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { dashClient, startDashHarness, type DashHarness } from '../dashboard/harness.ts';
import { axe } from './axe.ts';
import { CHROMIUM, skipBrowser } from './harness.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/pos');
const MARKUP = '<img src=x onerror="window.__pwned=1"><b>table</b> & "4"';

let h: DashHarness;
let browser: Browser;
let m: CreatedMerchant;
let wallet: string;

async function openTill(ctx: BrowserContext): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`${h.svc}/pos`);
  // No session yet: the till sends the merchant to the dashboard's login.
  expect(page.url()).toBe(`${h.svc}/dashboard/login`);
  await page.getByLabel('Email').fill(m.dashboard.email);
  await page.getByLabel('Password').fill(m.dashboard.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Setup checklist' }).waitFor();
  await page.goto(`${h.svc}/pos`);
  await page.getByRole('group', { name: 'Keypad' }).waitFor();
  return page;
}

async function key(page: Page, keys: string): Promise<void> {
  for (const k of keys) await page.getByRole('group', { name: 'Keypad' }).getByRole('button', { name: k === '.' ? 'Point' : k, exact: true }).click();
}

describe.skipIf(skipBrowser)('point of sale in Chromium', () => {
  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    h = await startDashHarness({ ANM_RATES: 'USD=0.25' });
    m = await h.merchant('Corner Café');
    wallet = path.join(h.dataDir, 'customer.json');
    const w = await h.cli(['wallet', 'create', '--out', wallet]);
    await h.cli(['wallet', 'fund', String(w.address), '1000000000000']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await h?.close();
  });

  it('tablet: keypad to PAID while the CLI pays; New sale; today counts it; the note is text', { timeout: 120_000 }, async () => {
    // CSP bypassed only so axe-core can be injected; markup must render as text without it.
    const tablet = await browser.newContext({ viewport: { width: 1024, height: 768 }, hasTouch: true, bypassCSP: true });
    const page = await openTill(tablet);
    expect(await axe(page)).toEqual([]);
    await key(page, '12.5');
    await page.getByRole('button', { name: 'Delete' }).click();
    await key(page, '75');
    await expect(page.getByTestId('display').textContent()).resolves.toBe('12.75 ANM');
    await page.getByLabel('Note').fill(MARKUP);
    await page.screenshot({ path: path.join(ARTIFACTS, 'tablet-01-keypad.png'), fullPage: true });
    await page.getByRole('button', { name: 'Charge' }).click();
    const checkout = page.locator('anm-checkout');
    await checkout.waitFor();
    await page.locator('anm-checkout anm-qr').waitFor();
    const id = await page.evaluate(() => document.querySelector('anm-pos')!.shadowRoot!.querySelector('anm-checkout')!.data!.intent.id);
    expect(id).toMatch(/^pay_/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'tablet-02-awaiting.png'), fullPage: true });
    await h.cli(['wallet', 'pay', id, '--wallet', wallet]);
    await h.cli(['devnet', 'mine', '12']);
    await page.getByTestId('paid').waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'tablet-03-paid.png'), fullPage: true });
    await page.locator('[data-testid="totals"]', { hasText: '1 paid of 1' }).waitFor();
    await expect(page.getByTestId('totals').textContent()).resolves.toContain('12.75 ANM');
    // The note is shown as text in today's list; nothing in it ran.
    expect(await page.locator('anm-pos td', { hasText: '<b>table</b>' }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.getByRole('button', { name: 'New sale' }).click();
    await expect(page.getByTestId('display').textContent()).resolves.toBe('0 ANM');
    await tablet.close();
  });

  it('desktop and phone: a USD sale is quoted from the rate source and paid; Charge is off until an amount is keyed', { timeout: 150_000 }, async () => {
    for (const [name, ctx] of [
      ['desktop', await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true })],
      ['phone', await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true })],
    ] as const) {
      const page = await openTill(ctx);
      await expect(page.getByRole('button', { name: 'Charge' }).isDisabled()).resolves.toBe(true);
      await page.getByLabel('Currency').selectOption('USD');
      await key(page, '5');
      await expect(page.getByTestId('display').textContent()).resolves.toBe('5 USD');
      await page.getByRole('button', { name: 'Charge' }).click();
      await page.locator('anm-checkout anm-qr').waitFor();
      const anm = await page.evaluate(() => document.querySelector('anm-pos')!.shadowRoot!.querySelector('anm-checkout')!.data!.intent.anm_amount);
      expect(anm).toBe('20000000000');
      expect(await axe(page)).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-01-usd-sale.png`), fullPage: true });
      // Issue 23: POS keypad to PAID, desktop and phone.
      const id = await page.evaluate(() => document.querySelector('anm-pos')!.shadowRoot!.querySelector('anm-checkout')!.data!.intent.id);
      await h.cli(['wallet', 'pay', id, '--wallet', wallet]);
      await h.cli(['devnet', 'mine', '12']);
      await page.getByTestId('paid').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'New sale' }).waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-02-paid.png`), fullPage: true });
      await ctx.close();
    }
  });

  it('tablet: products from the grid into a cart, charged at the links\' prices', { timeout: 90_000 }, async () => {
    for (const [slug, title, amount] of [
      ['latte', 'Latte', '3.5'],
      ['bagel', 'Bagel', '2'],
    ] as const) {
      const r = await fetch(`${h.svc}/api/v1/payment-links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.keys.test.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ slug, title, amount }),
      });
      expect(r.status).toBe(201);
    }
    const tablet = await browser.newContext({ viewport: { width: 1024, height: 768 }, hasTouch: true, bypassCSP: true });
    const page = await openTill(tablet);
    const grid = page.getByRole('group', { name: 'Products' });
    await grid.getByRole('button', { name: /Latte/ }).click();
    await grid.getByRole('button', { name: /Latte/ }).click();
    await grid.getByRole('button', { name: /Bagel/ }).click();
    await expect(page.getByTestId('cart-total').textContent()).resolves.toBe('9 ANM');
    await page.getByRole('button', { name: 'One less Latte' }).click();
    await expect(page.getByTestId('cart-total').textContent()).resolves.toBe('5.5 ANM');
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'tablet-04-cart.png'), fullPage: true });
    await page.getByRole('button', { name: 'Charge' }).click();
    await page.locator('anm-checkout anm-qr').waitFor();
    const intent = await page.evaluate(() => document.querySelector('anm-pos')!.shadowRoot!.querySelector('anm-checkout')!.data!.intent);
    expect(intent.anm_amount).toBe('5500000000');
    expect(intent.description).toBe('1 × Latte, 1 × Bagel');
    await tablet.close();
  });

  it('tablet: limited products show units left; one sold at another till while in the cart is refused with a message and greys out; another is held for the sale', { timeout: 90_000 }, async () => {
    const ids: Record<string, string> = {};
    for (const [slug, title, units] of [
      ['candle', 'Candle', 1],
      ['soap', 'Soap', 2],
    ] as const) {
      const r = await fetch(`${h.svc}/api/v1/payment-links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.keys.test.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ slug, title, amount: '4', units_total: units }),
      });
      expect(r.status).toBe(201);
      ids[slug] = ((await r.json()) as { id: string }).id;
    }
    const tablet = await browser.newContext({ viewport: { width: 1024, height: 768 }, hasTouch: true, bypassCSP: true });
    const page = await openTill(tablet);
    const grid = page.getByRole('group', { name: 'Products' });
    const candle = grid.getByRole('button', { name: /Candle/ });
    await expect(candle.textContent()).resolves.toContain('1 left');
    await candle.click();
    // The only candle is in this cart: no second one.
    await expect(candle.isDisabled()).resolves.toBe(true);
    // Another till sells it meanwhile.
    const other = dashClient(h.svc);
    await other.login(m.dashboard.email, m.dashboard.password);
    expect((await other.req('POST', '/pos/api/charge', { sale_id: 'sale_other_till_1', items: [{ link: ids.candle, quantity: 1 }] })).status).toBe(201);
    await page.getByRole('button', { name: 'Charge' }).click();
    await page.getByRole('alert').filter({ hasText: 'Candle: none is left' }).waitFor();
    await grid.getByRole('button', { name: /Candle/ }).filter({ hasText: 'Sold out' }).waitFor();
    await expect(candle.isDisabled()).resolves.toBe(true);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'tablet-05-sold-out.png'), fullPage: true });
    await page.getByRole('button', { name: 'One less Candle' }).click();
    await grid.getByRole('button', { name: /Soap/ }).click();
    await page.getByRole('button', { name: 'Charge' }).click();
    await page.locator('anm-checkout anm-qr').waitFor();
    const intent = await page.evaluate(() => document.querySelector('anm-pos')!.shadowRoot!.querySelector('anm-checkout')!.data!.intent);
    expect(intent.description).toBe('1 × Soap');
    const link = (await (await fetch(`${h.svc}/api/v1/payment-links/${ids.soap}`, { headers: { authorization: `Bearer ${m.keys.test.secret}` } })).json()) as { units_held: number };
    expect(link.units_held).toBe(1);
    await page.getByRole('button', { name: 'Start another sale' }).click();
    await grid.getByRole('button', { name: /Soap/ }).filter({ hasText: '1 left' }).waitFor();
    await tablet.close();
  });

  it('tablet portrait and landscape: today\'s table with long notes and amounts stays inside its panel, no page scrolls sideways', { timeout: 90_000 }, async () => {
    const zone = elevenOClockZone();
    const till = dashClient(h.svc);
    await till.login(m.dashboard.email, m.dashboard.password);
    for (const [n, sale] of [
      [1, { amount: '123456789.123456789', currency: 'ANM', note: `Order ${'0123456789'.repeat(12)}` }],
      [2, { amount: '99999.99', currency: 'USD', note: `${MARKUP} https://example.com/a/very/long/path/without/any/spaces/in/it/at/all?and=a&query=string` }],
      [3, { amount: '7', currency: 'ANM' }],
    ] as const) {
      expect((await till.req('POST', '/pos/api/charge', { sale_id: `sale_today_wide_${n}`, ...sale })).status).toBe(201);
    }
    for (const [name, viewport] of [
      ['portrait', { width: 768, height: 1024 }],
      ['landscape', { width: 1024, height: 768 }],
    ] as const) {
      // The sales' times shown at their widest whatever the hour the test runs at: a time zone in
      // which it was 11 o'clock when they were made (a 9:xx took a character less and hid an overflow).
      const tablet = await browser.newContext({ viewport, hasTouch: true, bypassCSP: true, locale: 'en-US', timezoneId: zone });
      const page = await openTill(tablet);
      await page.locator('anm-pos td', { hasText: '0123456789'.repeat(3) }).waitFor();
      expect(await page.locator('anm-pos td', { hasText: /^\s*1[0-2]:\d\d(:\d\d)?\s[AP]M\s*$/ }).count()).toBeGreaterThan(0);
      const overflow = await page.evaluate(() => {
        const panel = document.querySelector('anm-pos')!.shadowRoot!.querySelector('section[aria-labelledby="today"]')!;
        const box = panel.getBoundingClientRect();
        const out: string[] = [];
        const name = (el: Element) => `${el.tagName.toLowerCase()} "${(el.textContent ?? '').slice(0, 30)}"`;
        for (const el of [panel, ...panel.querySelectorAll('*')]) {
          const r = el.getBoundingClientRect();
          // A box-less element (a <wbr>) sits at 0,0 and holds nothing.
          if (r.width === 0 && r.height === 0) continue;
          // Half a pixel for subpixel layout.
          if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(`${name(el)} spans ${r.left}..${r.right} outside ${box.left}..${box.right}`);
          if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth) out.push(`${name(el)} scrolls: ${el.scrollWidth} > ${el.clientWidth}`);
        }
        if (box.right > document.documentElement.clientWidth + 0.5) out.push(`panel ends at ${box.right}, past the viewport`);
        if (document.documentElement.scrollWidth > document.documentElement.clientWidth) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth}`);
        return out;
      });
      expect(overflow).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, `tablet-06-today-${name}.png`), fullPage: true });
      await tablet.close();
    }
  });
});

/** An `Etc/GMT` zone where the hour now is 11 (AM or PM), for the next few minutes. */
function elevenOClockZone(): string {
  const ahead = (((11 - new Date().getUTCHours()) % 12) + 12) % 12;
  // Etc/GMT-N is N hours ahead of UTC (the sign is POSIX's, inverted).
  return ahead === 0 ? 'UTC' : `Etc/GMT-${ahead}`;
}
