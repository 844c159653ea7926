/**
 * The docs site in Chromium (DESIGN §7 "Docs site": "`/docs/docs.js` the client search box"):
 * the search box loads the prebuilt index and lists the webhook verification recipe as the
 * reader types; a click lands on the section; with script off, the same form gives the
 * server-side results page. No CSP violation or script error on the way. Screenshots go to
 * test-artifacts/e2e/.
 */
import { mkdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsApp } from '../docs/docs-app.ts';
import { ARTIFACTS, CHROMIUM, skipBrowser } from './harness.ts';

describe.skipIf(skipBrowser)('docs search box in Chromium', () => {
  let app: FastifyInstance;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    app = await docsApp();
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('lists the webhook verification recipe as the reader types, and a click opens it', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${url}/docs`);
    await page.waitForFunction(() => customElements.get('anm-docs-search') !== undefined);
    await page.locator('#docs-q').pressSequentially('verify webhook signature', { delay: 20 });
    const first = page.locator('anm-docs-search .panel a').first();
    await first.waitFor();
    expect(await first.getAttribute('href')).toBe('/docs/webhooks#verifying-a-delivery');
    expect(await first.innerText()).toContain('Verifying a delivery');
    await page.screenshot({ path: `${ARTIFACTS}/docs-search-box.png`, fullPage: false });
    await first.click();
    await page.waitForURL(/\/docs\/webhooks#verifying-a-delivery$/);
    await expect.poll(() => page.locator('h2#verifying-a-delivery').isVisible()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/docs-webhooks-recipe.png`, fullPage: false });
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it('without script the form submits to the server-side results page', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(`${url}/docs/getting-started`);
    await page.fill('#docs-q', 'verify webhook signature');
    await page.press('#docs-q', 'Enter');
    await page.waitForURL(/\/docs\/search\?q=verify\+webhook\+signature$/);
    expect(await page.locator('ol.results a').first().getAttribute('href')).toBe('/docs/webhooks#verifying-a-delivery');
    await page.screenshot({ path: `${ARTIFACTS}/docs-search-results-phone.png`, fullPage: true });
    await ctx.close();
  });

  it('fits a phone: no page scrolls sideways (wide tables and code scroll inside themselves)', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    for (const p of ['/', '/docs', '/docs/webhooks', '/docs/api-reference', '/docs/observability', '/docs/nope']) {
      await page.goto(`${url}${p}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, p).toBeLessThanOrEqual(390);
    }
    await page.goto(`${url}/`);
    await page.screenshot({ path: `${ARTIFACTS}/landing-phone.png`, fullPage: true });
    await ctx.close();
  });
});
