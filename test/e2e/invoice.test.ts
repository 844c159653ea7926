/**
 * Invoices end to end (issue 23 "What must be shown", DESIGN §7 "Invoices"): the whole service
 * (`startServices`; real PostgreSQL + NATS when reachable, own schema and namespace), a draft
 * made and finalized over the API, its `/i/{token}` page opened in Chromium (desktop and phone,
 * markup in line items shown as text), Pay pressed, the intent paid with `anmpay wallet pay`
 * on the devnet, and then: the invoice PAID, exactly one `invoice.paid` delivery that verifies
 * with the independent verifier, a paid or voided invoice refusing to start a payment, an
 * unknown token a 404 page, and a reorg of the payment returning the invoice to OPEN without a
 * second `invoice.paid` fact when the same payment settles again. The dashboard's invoices
 * page follows its invoices live: one created and paid while it is open shows PAID, no reload.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { cliJson } from '../helpers/cli.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { verifyIndependently } from '../webhooks/independent-verifier.ts';
import { Receiver } from '../webhooks/receiver.ts';
import { ARTIFACTS, CHROMIUM, skipBrowser } from './harness.ts';

type Json = Record<string, unknown>;
let services: Services;
let browser: Browser;
let dataDir: string;
let base: string;
let receiver: Receiver;
let secret: string;
let key: string;
let login: { email: string; password: string };
const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
const schema = uniqueName('e2einv');

const cli = (args: string[]): Promise<Json> =>
  cliJson<Json>(args, { ANMPAY_URL: base, ANMPAY_DEVNET_URL: services.devnet!.url, ANMPAY_DATA_DIR: dataDir, ANMPAY_OPERATOR_TOKEN: operatorToken });

async function api(method: string, p: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

const invoiceIn = (id: string, status: string) =>
  waitFor(async () => {
    const r = await api('GET', `/api/v1/invoices/${id}`);
    return r.body.status === status ? r.body : undefined;
  }, 30_000, `${id} to be ${status}`);

async function mine(n: number): Promise<void> {
  await cli(['devnet', 'mine', String(n), '--network', 'test']);
  await new Promise((r) => setTimeout(r, 700));
}

async function openInvoice(lines: unknown[]): Promise<Json> {
  const draft = await api('POST', '/api/v1/invoices', { customer_name: 'Ada <script>alert(1)</script>', customer_email: 'ada@example.com', line_items: lines, due_at: '2020-01-31', memo: 'Thanks <i>a lot</i>' });
  expect(draft.status).toBe(201);
  expect(draft.body).toMatchObject({ object: 'invoice', status: 'DRAFT', hosted_url: null, number: null });
  const open = await api('POST', `/api/v1/invoices/${draft.body.id as string}/finalize`);
  expect(open.status).toBe(200);
  return open.body;
}

beforeAll(async () => {
  if (skipBrowser) return;
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-e2e-invoice-'));
  await mkdir(ARTIFACTS, { recursive: true });
  const real: Record<string, string> = realAvailable ? { DATABASE_URL, ANMPAY_DB_SCHEMA: schema, NATS_URL, NATS_NAMESPACE: schema } : {};
  services = await startServices(inProcessConfig(dataDir, operatorToken, { ANMPAY_ALLOW_PRIVATE_WEBHOOKS: '1', ...real }));
  base = services.http!.url;
  const merchant = (await cli(['merchant', 'create', '--name', 'Invoice <b>Studio</b>'])) as { merchant_id: string; dashboard: typeof login; keys: { test: { secret: string } } };
  key = merchant.keys.test.secret;
  login = merchant.dashboard;
  receiver = await Receiver.start();
  secret = (await cli(['webhook', 'set', '--merchant', merchant.merchant_id, '--mode', 'test', '--url', `http://127.0.0.1:${receiver.port}/hooks`])).secret as string;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await services?.stop();
  await receiver?.close();
  if (realAvailable) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Logs the demo merchant in and opens the dashboard's invoices page. */
async function openInvoices(page: Page): Promise<void> {
  await page.goto(`${base}/dashboard/login`);
  await page.getByLabel('Email').fill(login.email);
  await page.getByLabel('Password').fill(login.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Setup checklist' }).waitFor();
  await page.goto(`${base}/dashboard/invoices`);
}

describe.skipIf(skipBrowser)('invoices end to end (issue 23)', () => {
  it('create, finalize, open /i/{token}, pay with the CLI wallet: PAID, one invoice.paid that verifies; paid cannot be paid again; a reorg reopens it', async () => {
    const inv = await openInvoice([
      { description: 'Logo <img src=x onerror=alert(1)>', quantity: 2, unit_price: '0.75' },
      { description: 'Hosting & support', quantity: 1, unit_price: '1' },
    ]);
    expect(inv).toMatchObject({ status: 'OPEN', number: 'INV-0001', total: '2.5', overdue: true });
    const url = inv.hosted_url as string;
    expect(url).toMatch(new RegExp(`^${base}/i/[a-z2-7]{32}$`));

    const desktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await desktop.goto(url);
    // Markup is text: the line items, the customer and the memo show their characters, no element is made.
    await expect(desktop.locator('td', { hasText: 'Logo <img src=x onerror=alert(1)>' }).count()).resolves.toBe(1);
    expect(await desktop.locator('main img, main script, main i').count()).toBe(0);
    expect(await desktop.locator('[data-total]').textContent()).toBe('2.5 ANM');
    expect(await desktop.locator('.badge').textContent()).toBe('Overdue');
    await desktop.screenshot({ path: path.join(ARTIFACTS, 'invoice-desktop.png'), fullPage: true });
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(url);
    await phone.screenshot({ path: path.join(ARTIFACTS, 'invoice-phone.png'), fullPage: true });
    // The pay button fits the phone's width (no horizontal scroll).
    expect(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

    await desktop.getByRole('button', { name: 'Pay 2.5 ANM' }).click();
    await desktop.waitForURL(/\/c\/pay_[a-z2-7]{24}$/);
    const intentId = new URL(desktop.url()).pathname.split('/').pop()!;
    const attached = await api('GET', `/api/v1/invoices/${inv.id as string}`);
    expect(attached.body.payment_intent).toBe(intentId);
    // Pressing Pay again reuses the payable intent.
    const again = await fetch(`${url}/pay`, { method: 'POST', redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`/c/${intentId}`);

    const wallet = await cli(['wallet', 'create']);
    await cli(['wallet', 'fund', wallet.address as string, '10000000000']);
    const paid = await cli(['wallet', 'pay', intentId, '--wallet', wallet.wallet as string]);
    await mine(12);
    const done = await invoiceIn(inv.id as string, 'PAID');
    expect(done).toMatchObject({ payment_intent: intentId, overdue: false });
    expect(done.paid_at).toEqual(expect.any(String));

    const invoicePaid = () => receiver.received.filter((r) => r.body.type === 'invoice.paid' && r.body.data.id === inv.id);
    await waitFor(async () => invoicePaid().length > 0 || undefined, 20_000, 'invoice.paid delivery');
    await desktop.goto(url);
    expect(await desktop.locator('.badge').textContent()).toBe('PAID');
    await desktop.screenshot({ path: path.join(ARTIFACTS, 'invoice-paid-desktop.png'), fullPage: true });
    // A paid invoice cannot start a payment: the page says so, no redirect.
    const refused = await fetch(`${url}/pay`, { method: 'POST', redirect: 'manual' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('This invoice is paid.');

    // The same payment reorged away and settling again: OPEN in between, PAID again, the same fact.
    await cli(['devnet', 'reorg', '12', '--drop', paid.tx_hash as string]);
    const reopened = await invoiceIn(inv.id as string, 'OPEN');
    expect(reopened.paid_at).toBeNull();
    await cli(['wallet', 'pay', intentId, '--wallet', wallet.wallet as string]);
    await mine(12);
    await invoiceIn(inv.id as string, 'PAID');
    await new Promise((r) => setTimeout(r, 2000));
    const deliveries = invoicePaid();
    expect(deliveries).toHaveLength(1);
    const d = deliveries[0]!;
    expect(verifyIndependently({ rawBody: d.rawBody, headers: d.headers, secret, nowSeconds: Math.floor(Date.now() / 1000) })).toEqual({ ok: true, eventId: d.body.id });
    expect(d.body.data).toMatchObject({ id: inv.id, status: 'PAID', number: 'INV-0001', total: '2.5', currency: 'ANM', payment_intent: intentId, mode: 'test' });
    // The merchant learned of the reversal from payment.reorged, which names the invoice.
    const reorged = receiver.received.find((r) => r.body.type === 'payment.reorged' && r.body.data.id === intentId);
    expect(reorged?.body.data.metadata).toMatchObject({ invoice: inv.id });
  }, 180_000);

  it('a voided invoice cannot start a payment (its open intent is canceled); an unknown token is a 404 page', async () => {
    const inv = await openInvoice([{ description: 'Consulting', quantity: 1, unit_price: '3' }]);
    expect(inv.number).toBe('INV-0002');
    const pressed = await fetch(`${inv.hosted_url as string}/pay`, { method: 'POST', redirect: 'manual' });
    const intentId = pressed.headers.get('location')!.replace('/c/', '');
    const voided = await api('POST', `/api/v1/invoices/${inv.id as string}/void`);
    expect(voided.body.status).toBe('VOID');
    const again = await api('POST', `/api/v1/invoices/${inv.id as string}/void`);
    expect(again.status).toBe(409);
    expect((again.body.error as Json).code).toBe('invalid_invoice_status');
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(inv.hosted_url as string);
    expect(await page.locator('form').count()).toBe(0);
    expect(await page.locator('.closed').textContent()).toContain('voided');
    const refused = await fetch(`${inv.hosted_url as string}/pay`, { method: 'POST', redirect: 'manual' });
    expect(refused.status).toBe(409);
    // Voiding sent the intent a cancel through the engine: nobody can pay it from its checkout.
    await waitFor(async () => ((await api('GET', `/api/v1/payment-intents/${intentId}`)).body.status === 'EXPIRED' ? true : undefined), 20_000, 'intent canceled');
    const missing = await page.goto(`${base}/i/${'a'.repeat(32)}`);
    expect(missing?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Invoice not found');
    await page.screenshot({ path: path.join(ARTIFACTS, 'invoice-not-found-phone.png'), fullPage: true });
  }, 60_000);

  it('the dashboard lists, creates (finalized) and voids invoices', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    page.on('dialog', (d) => void d.accept());
    await openInvoices(page);
    await page.getByRole('heading', { name: 'Invoices (test)' }).waitFor();
    await page.getByLabel('Customer').fill('Grace <Hopper>');
    await page.getByLabel('Item 1').fill('Audit <b>now</b>');
    await page.locator('#p0').fill('4.2');
    await page.getByRole('button', { name: 'Create invoice' }).click();
    const row = page.locator('tr', { hasText: 'INV-0003' });
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('Grace <Hopper>');
    expect(await row.locator('.status').textContent()).toBe('OPEN');
    await page.screenshot({ path: path.join(ARTIFACTS, 'invoice-dashboard-desktop.png'), fullPage: true });
    await row.getByRole('button', { name: 'Void' }).click();
    await page.locator('tr', { hasText: 'INV-0003' }).locator('.status', { hasText: 'VOID' }).waitFor();
    const listed = (await api('GET', '/api/v1/invoices?status=VOID')).body.data as Json[];
    expect(listed.map((i) => i.number)).toContain('INV-0003');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'invoice-dashboard-phone.png'), fullPage: true });
    await ctx.close();
  }, 60_000);

  it('the dashboard follows invoices live: one created over the API appears, and turns PAID when its payment confirms, without a reload', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await openInvoices(page);
    await page.getByTestId('live').waitFor();
    // A reload would lose this mark.
    await page.evaluate(() => ((window as unknown as { __same?: number }).__same = 1));

    const inv = await openInvoice([{ description: 'Live consult', quantity: 1, unit_price: '1.5' }]);
    const row = page.locator('tr', { hasText: inv.number as string });
    await row.locator('.status', { hasText: 'OPEN' }).waitFor({ timeout: 15_000 });
    const pay = await fetch(`${inv.hosted_url as string}/pay`, { method: 'POST', redirect: 'manual' });
    expect(pay.status).toBe(303);
    const intentId = pay.headers.get('location')!.split('/').pop()!;
    const wallet = await cli(['wallet', 'create']);
    await cli(['wallet', 'fund', wallet.address as string, '10000000000']);
    await cli(['wallet', 'pay', intentId, '--wallet', wallet.wallet as string]);
    await mine(12);
    await row.locator('.status', { hasText: 'PAID' }).waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { __same?: number }).__same)).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'invoice-dashboard-live-paid.png'), fullPage: true });
    await ctx.close();
  }, 90_000);
});
