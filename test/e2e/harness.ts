/**
 * What the checkout browser tests share: the whole service started in-process
 * (`startServices`, embedded PGlite + in-process bus, devnet mining only on request), a
 * merchant with test keys and one allowed origin (a page served by `merchantSite`), a funded
 * CLI wallet, and headless Chromium (Debian's /usr/bin/chromium driven by playwright-core).
 *
 * Tests skip, with a message, only when /usr/bin/chromium is absent and REQUIRE_SERVICES is
 * not set; CI installs chromium (.ci/run) and sets REQUIRE_SERVICES=1, so there they run.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inProcessConfig } from '../helpers/service-config.ts';
import { startServices, type Services } from '../../bin/services.ts';
import { cliJson } from '../helpers/cli.ts';
import { merchantPage } from './merchant-page.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'e2e');
const hasChromium = existsSync(CHROMIUM);
export const skipBrowser = !hasChromium && process.env.REQUIRE_SERVICES !== '1';
if (skipBrowser) console.warn(`[e2e] SKIPPED: ${CHROMIUM} is absent (apt-get install -y chromium); with REQUIRE_SERVICES=1 this is a failure instead.`);

export interface CheckoutE2e {
  services: Services;
  browser: Browser;
  /** A phone: 390×844, touch, coarse pointer; clipboard granted on the service's origin. */
  ctx: BrowserContext;
  dataDir: string;
  svc: string;
  /** The merchant's page (an allowed origin) that loads widget.js with the publishable key. */
  merchantUrl: string;
  merchantId: string;
  secretKey: string;
  publishableKey: string;
  /** A funded CLI wallet file. */
  wallet: string;
  cli(args: string[]): Promise<Record<string, unknown>>;
  createIntent(body: Record<string, unknown>): Promise<{ id: string; anm_amount: string }>;
  api(method: string, p: string, body?: unknown, auth?: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startCheckoutE2e(): Promise<CheckoutE2e> {
  if (!hasChromium) throw new Error(`REQUIRE_SERVICES=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
  await mkdir(ARTIFACTS, { recursive: true });
  const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'anm-e2e-'));
  const config = inProcessConfig(dataDir, operatorToken);
  const services = await startServices(config);
  const svc = services.http!.url;
  let publishableKey = '';
  const merchantSite: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(merchantPage(svc, publishableKey)));
  await new Promise<void>((r) => merchantSite.listen(0, '127.0.0.1', r));
  const merchantUrl = `http://127.0.0.1:${(merchantSite.address() as AddressInfo).port}`;

  const cli = (args: string[]): Promise<Record<string, unknown>> =>
    cliJson(args, { ANMPAY_URL: svc, ANMPAY_DEVNET_URL: services.devnet!.url, ANMPAY_DATA_DIR: dataDir, ANMPAY_OPERATOR_TOKEN: operatorToken });
  let secretKey = '';
  const api = async (method: string, p: string, body?: unknown, auth = secretKey): Promise<Record<string, unknown>> => {
    const res = await fetch(`${svc}${p}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  const m = (await api('POST', '/ops/api/merchants', { name: 'E2E <Shop> & Co' }, operatorToken)) as unknown as {
    merchant_id: string;
    keys: { test: { secret: string; publishable: string } };
  };
  secretKey = m.keys.test.secret;
  publishableKey = m.keys.test.publishable;
  const origins = await cli(['merchant', 'origins', m.merchant_id, '--origin', `${merchantUrl}/shop`]);
  if (JSON.stringify(origins.allowed_origins) !== JSON.stringify([merchantUrl])) throw new Error(`allowed origins: ${JSON.stringify(origins)}`);

  const wallet = path.join(dataDir, 'payer.json');
  const w = await cli(['wallet', 'create', '--out', wallet]);
  await cli(['wallet', 'fund', String(w.address), '1000000000000']);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc });

  return {
    services,
    browser,
    ctx,
    dataDir,
    svc,
    merchantUrl,
    merchantId: m.merchant_id,
    secretKey,
    publishableKey,
    wallet,
    cli,
    api,
    createIntent: async (body) => (await api('POST', '/api/v1/payment-intents', body)) as unknown as { id: string; anm_amount: string },
    async close() {
      await ctx.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await new Promise<void>((r) => merchantSite.close(() => r()));
      await services.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** The status the page shows (`<anm-status>` in the checkout's shadow DOM; Playwright pierces open roots). */
export const statusBox = (page: Page, status: string) => page.locator(`anm-status section[data-status="${status}"]`);
