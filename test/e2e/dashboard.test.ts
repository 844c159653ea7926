/**
 * The merchant dashboard in Chromium (issue 22 "What must be shown"), on the whole service
 * started in-process: log in with the form, create a key (shown once, copied) and revoke it,
 * set a webhook and watch a test event's delivery and its attempts, redeliver, follow a
 * payment's live timeline to PAID while the CLI pays it, see markup in a description as text,
 * switch mode. Every page is checked with axe-core (labels, contrast at least 4.5:1) and
 * shot at desktop and phone widths into test-artifacts/dashboard/.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSignedTx } from '../../machines/chain/index.ts';
import { readWalletFile, sign } from '../../runtime/chain/codec/keys.ts';
import { buildRefundTx, unsignedTransferSchema } from '../../runtime/chain/payment-tx.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { startDashHarness, type DashHarness } from '../dashboard/harness.ts';
import { axe } from './axe.ts';
import { CHROMIUM, skipBrowser } from './harness.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const MARKUP = '<img src=x onerror="window.__pwned=1"><b>bold</b> & "quotes"';

let h: DashHarness;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let m: CreatedMerchant;
let wallet: string;
let receiver: Server;
let receiverUrl: string;
const received: string[] = [];

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function login(ctx: BrowserContext): Promise<Page> {
  await ctx.clearCookies();
  const page = await ctx.newPage();
  await page.goto(`${h.svc}/dashboard`);
  expect(page.url()).toBe(`${h.svc}/dashboard/login`);
  await page.getByLabel('Email').fill(m.dashboard.email);
  await page.getByLabel('Password').fill(m.dashboard.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Setup checklist' }).waitFor();
  return page;
}

describe.skipIf(skipBrowser)('dashboard in Chromium', () => {
  beforeAll(async () => {
    h = await startDashHarness();
    m = await h.merchant('Dash <E2E> & Co');
    wallet = path.join(h.dataDir, 'payer.json');
    const w = await h.cli(['wallet', 'create', '--out', wallet]);
    await h.cli(['wallet', 'fund', String(w.address), '1000000000000']);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok from the e2e receiver');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    // CSP bypassed only so axe-core can be injected; markup must render as text without it.
    desktop = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    for (const c of [desktop, phone]) await c.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.svc });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await h?.close();
  });

  it('log in, create a key with the keyboard (shown once, copied), revoke it', { timeout: 90_000 }, async () => {
    const page = await login(desktop);
    await shot(page, 'desktop-01-home');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    // Keyboard only: the kind, Tab to Create key, Enter.
    await page.getByLabel('Kind').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const value = page.locator('anm-copy-field[field="key"] code');
    await value.waitFor();
    const key = (await value.textContent())!;
    expect(key).toMatch(/^ask_test_[A-Za-z0-9]{32}$/);
    // Keyboard only: focus the Copy button, press Enter.
    await page.getByRole('button', { name: /Copy New secret key/ }).focus();
    await page.keyboard.press('Enter');
    await page.locator('anm-copy-field[field="key"] [role="status"]', { hasText: 'Copied' }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(key);
    await shot(page, 'desktop-02-key-created');
    expect((await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    page.once('dialog', (d) => void d.accept());
    const prefix = key.slice(0, key.lastIndexOf('_') + 5);
    await page.getByRole('button', { name: `Revoke ${prefix}` }).click();
    await page.getByRole('row', { name: new RegExp(prefix) }).getByText(/^Revoked/).waitFor();
    expect((await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    // A reload shows the list, never the key again.
    await page.reload();
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
    await shot(page, 'desktop-03-key-revoked');
  });

  it('webhooks: set the endpoint with the keyboard (secret shown once), send a test event, see the delivery and its attempts, redeliver', { timeout: 90_000 }, async () => {
    const page = await login(desktop);
    await page.goto(`${h.svc}/dashboard/webhooks`);
    // Keyboard only: type the URL, Tab to the Save button, press Enter.
    await page.getByLabel('Endpoint URL').focus();
    await page.keyboard.type(receiverUrl);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const secret = page.locator('anm-copy-field[field="secret"] code');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Test event evt_[0-9a-f]+ queued/).waitFor();
    // The worker delivers in the background; the log is read again on request.
    for (let i = 0; i < 40 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 250));
    expect(received.length).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Refresh log' }).click();
    await page.locator('td.status', { hasText: 'succeeded' }).first().waitFor();
    await page.getByRole('button', { name: /^Attempts of evt_/ }).first().click();
    await page.getByRole('cell', { name: 'ok from the e2e receiver' }).first().waitFor();
    await page.getByRole('cell', { name: /^\d+ ms$/ }).first().waitFor();
    await shot(page, 'desktop-04-webhooks');
    const before = received.length;
    await page.getByRole('button', { name: /^Redeliver evt_/ }).first().click();
    await page.getByText('Redelivery queued.').waitFor();
    for (let i = 0; i < 40 && received.length === before; i++) await new Promise((r) => setTimeout(r, 250));
    expect(received.length).toBe(before + 1);
    await page.getByRole('button', { name: 'Refresh log' }).click();
    await page.getByRole('cell', { name: /\(manual\)/ }).first().waitFor();
    await shot(page, 'desktop-05-redelivered');
  });

  it("a payment's timeline goes to PAID live while the CLI pays it; markup in its description is text", { timeout: 120_000 }, async () => {
    const intent = await h.intent(m.keys.test.secret, { amount: '1.25', description: MARKUP, merchant_order_id: 'order-77' });
    const page = await login(desktop);
    await page.goto(`${h.svc}/dashboard/payments`);
    await page.getByRole('link', { name: intent.id }).waitFor();
    await expect(page.locator('anm-dash-payment-table td span.muted').first().textContent()).resolves.toBe(MARKUP);
    await page.getByRole('link', { name: intent.id }).click();
    const status = page.locator('[data-testid="status"]');
    await expect(status.textContent()).resolves.toBe('AWAITING_PAYMENT');
    await expect(page.locator('[data-testid="description"]').textContent()).resolves.toBe(MARKUP);
    expect(await page.locator('anm-dash-payment b, anm-dash-payment img').count()).toBe(0);
    await page.getByText('(live)').waitFor();
    let navigations = 0;
    page.on('framenavigated', () => navigations++);

    await h.cli(['wallet', 'pay', intent.id, '--wallet', wallet]);
    await page.locator('[data-testid="status"]', { hasText: 'PAYMENT_DETECTED' }).waitFor({ timeout: 20_000 });
    await h.cli(['devnet', 'mine', '12']);
    await page.locator('[data-testid="status"]', { hasText: 'PAID' }).waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="timeline"] li', { hasText: 'PAID' }).waitFor();
    expect(navigations).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await shot(page, 'desktop-06-payment-paid');
  });

  it('verify a live payout address with the signature the CLI prints; refund a live payment and submit its signed transaction', { timeout: 150_000 }, async () => {
    const file = path.join(h.dataDir, 'live-payout.json');
    const w = await h.cli(['wallet', 'create', '--network', 'live', '--out', file]);
    const page = await login(desktop);
    await page.getByLabel('Mode').selectOption('live');
    await page.getByRole('heading', { name: 'Balance (live)' }).waitFor();
    await page.getByRole('link', { name: 'Payout and widget' }).click();
    await page.getByLabel('New payout address').fill(String(w.address));
    await page.getByRole('button', { name: 'Save address' }).click();
    const command = page.locator('anm-copy-field[field="command"] code');
    await command.waitFor();
    const challenge = /--challenge (\S+)/.exec((await command.textContent())!)![1]!;
    const proof = await h.cli(['payout', 'verify', '--challenge', challenge, '--wallet', file]);
    await page.getByLabel('Signature printed by the command').fill(String(proof.signature));
    await page.getByRole('button', { name: 'Verify address' }).click();
    await page.locator('[data-testid="payout-state"]', { hasText: /^Verified/ }).waitFor();
    await shot(page, 'desktop-07-payout-verified');

    // A live payment, paid by the CLI, refunded from its page: the transfer signed with the
    // payout wallet's key and pasted in.
    const intent = await h.intent(m.keys.live.secret, { amount: '1', description: 'live order' });
    const buyer = path.join(h.dataDir, 'live-buyer.json');
    const b = await h.cli(['wallet', 'create', '--network', 'live', '--out', buyer]);
    await h.cli(['wallet', 'fund', String(b.address), '10000000000', '--network', 'live']);
    await h.cli(['wallet', 'pay', intent.id, '--wallet', buyer]);
    await page.goto(`${h.svc}/dashboard/payments/${intent.id}`);
    await page.getByText('(live)').waitFor();
    await h.cli(['devnet', 'mine', '12', '--network', 'live']);
    await page.locator('[data-testid="status"]', { hasText: 'PAID' }).waitFor({ timeout: 30_000 });
    await page.reload();
    await page.getByLabel('Amount in ANM (empty: all that is left)').fill('0.25');
    await page.getByLabel('Reason').fill('one item back');
    await page.getByRole('button', { name: 'Create refund' }).click();
    await page.locator('[data-testid="refund-status"]', { hasText: 'REQUIRES_SIGNATURE' }).waitFor();
    await page.locator('[data-testid="refund-live"]', { hasText: '(status live)' }).waitFor();
    const cmd = (await page.locator('anm-copy-field[field="refund-command"] code').textContent())!;
    const refundId = /refund sign (re_\S+)/.exec(cmd)![1]!;
    const view = (await (
      await page.request.get(`${h.svc}/dashboard/api/refunds/${refundId}`)
    ).json()) as { refund: { unsigned_transfer: unknown } };
    const pw = await readWalletFile(file);
    const rpc = new AnmRpcClient(`${h.services.devnet!.url}/live`);
    const tx = buildRefundTx(unsignedTransferSchema.parse(view.refund.unsigned_transfer), { chainId: 1, publicKey: pw.publicKey, nonce: await rpc.getNonce(pw.address, 'pending') });
    await page.getByLabel('Or paste a signed transaction (hex)').fill(encodeSignedTx(sign(tx, pw.secretKey)));
    await page.getByRole('button', { name: 'Submit signed transaction' }).click();
    await page.locator('[data-testid="refund-status"]', { hasText: /SUBMITTED|CONFIRMING/ }).waitFor();
    await h.cli(['devnet', 'mine', '12', '--network', 'live']);
    await page.locator('[data-testid="timeline"] li', { hasText: 'PARTIALLY_REFUNDED' }).waitFor({ timeout: 30_000 });
    // No reload, no button: the refund's status follows its actor over the stream.
    await page.locator('[data-testid="refund-status"]', { hasText: 'CONFIRMED' }).waitFor({ timeout: 30_000 });
    await shot(page, 'desktop-08-refund-confirmed');
    await page.goto(`${h.svc}/dashboard`);
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('note').waitFor();
  });

  it('mode switch scopes the pages; every page passes axe (labels, contrast) at desktop and phone widths', { timeout: 120_000 }, async () => {
    const pages = ['/dashboard', '/dashboard/payments', '/dashboard/keys', '/dashboard/webhooks', '/dashboard/settings', '/dashboard/account'];
    for (const [name, ctx] of [['desktop', desktop], ['phone', phone]] as const) {
      const page = await login(ctx);
      for (const p of pages) {
        await page.goto(`${h.svc}${p}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await page.waitForLoadState('networkidle');
        expect(await axe(page), `${name} ${p}`).toEqual([]);
        await shot(page, `${name}-page${p.replaceAll('/', '-')}`);
      }
      const login2 = await ctx.newPage();
      await ctx.clearCookies();
      await login2.goto(`${h.svc}/dashboard/login`);
      await login2.getByLabel('Email').waitFor();
      expect(await axe(login2), `${name} login`).toEqual([]);
      await shot(login2, `${name}-login`);
    }
    const page = await login(phone);
    await page.getByLabel('Mode').selectOption('live');
    await page.waitForURL(`${h.svc}/dashboard`);
    await page.getByRole('heading', { name: 'Balance (live)' }).waitFor();
    expect(await page.getByRole('note').count()).toBe(0);
    await page.goto(`${h.svc}/dashboard/payments`);
    // Live mode lists the live payment refunded above, never the test ones.
    await page.getByText('live order').waitFor();
    expect(await page.getByText(MARKUP).count()).toBe(0);
    await shot(page, 'phone-live-payments');
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('note').waitFor();
  });
});
