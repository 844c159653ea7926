/**
 * The hosted checkout and widget.js in headless Chromium against the whole service started
 * in-process, paid with the CLI wallet and mined with the CLI (issue 6 "What must be shown").
 * Harness: ./harness.ts. Screenshots go to test-artifacts/e2e/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shot, skipBrowser, startCheckoutE2e, statusBox, type CheckoutE2e } from './harness.ts';

let e: CheckoutE2e;
const cli = (args: string[]) => e.cli(args);
const createIntent = (body: Record<string, unknown>) => e.createIntent(body);

describe.skipIf(skipBrowser)('hosted checkout and widget in headless Chromium', () => {
  beforeAll(async () => {
    e = await startCheckoutE2e();
  }, 120_000);

  afterAll(async () => {
    await e?.close();
  }, 60_000);

  it('a customer opens the checkout, pays with the CLI wallet, and sees PAID live without a reload', { timeout: 180_000 }, async () => {
    const intent = await createIntent({ amount: '2.5', description: 'E2E order #1', success_url: 'https://shop.example/thanks?order=1' });
    const page = await e.ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    await page.goto(`${e.svc}/c/${intent.id}`);
    await statusBox(page, 'AWAITING_PAYMENT').waitFor();
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'same document'));

    // What the customer needs: merchant, amount, QR + URI, both outputs, reference, countdown.
    await expect(page.locator('anm-checkout h1').textContent()).resolves.toBe('E2E <Shop> & Co');
    await expect(page.locator('anm-amount .anm').textContent()).resolves.toBe('2.5 ANM');
    await page.locator('anm-qr svg[role="img"]').waitFor();
    const uri = await page.locator('anm-copy-field[field="uri"] code').textContent();
    expect(uri).toMatch(new RegExp(`^anm:tanm1\\w+\\?amount=2500000000&merchant_amount=2450000000&fee_amount=50000000&fee_to=tanm1\\w+&ref=pr1:[a-z2-7]+$`));
    await expect(page.locator('anm-outputs h3').allTextContents()).resolves.toEqual(['Output 1: to the merchant', 'Output 2: protocol fee (2.00%)', 'Payment reference']);
    await expect(page.locator('anm-outputs anm-copy-field[field="amount"] code').textContent()).resolves.toBe('2450000000');
    await expect(page.locator('anm-outputs anm-copy-field[field="fee"] code').textContent()).resolves.toBe('50000000');
    await expect(page.locator('anm-countdown [role="timer"]').textContent()).resolves.toMatch(/Pay within\s+(29|30):\d\d/);

    // Keyboard: focus the Copy button of the URI, press Enter; the page confirms and the clipboard has it.
    await page.locator('button[aria-label="Copy Payment URI"]').focus();
    await page.keyboard.press('Enter');
    await page.locator('anm-copy-field[field="uri"] [role="status"]', { hasText: 'Copied' }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(uri);
    await shot(page, '01-awaiting-payment');

    await cli(['wallet', 'pay', intent.id, '--wallet', e.wallet]);
    await statusBox(page, 'PAYMENT_DETECTED').waitFor({ timeout: 20_000 });
    expect(await page.locator('a.cta').count()).toBe(0);
    await shot(page, '02-payment-detected');

    await cli(['devnet', 'mine', '1']);
    await statusBox(page, 'CONFIRMING').waitFor({ timeout: 20_000 });
    await expect(page.locator('anm-status .depth').textContent()).resolves.toBe('1 of 12 confirmations');
    expect(await page.locator('a.cta').count()).toBe(0);
    await shot(page, '03-confirming');

    await cli(['devnet', 'mine', '11']);
    await statusBox(page, 'PAID').waitFor({ timeout: 20_000 });
    await expect(page.locator('a.cta').getAttribute('href')).resolves.toBe('https://shop.example/thanks?order=1');
    await shot(page, '04-paid');

    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('same document');
    expect(navigations).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('widget.js on a merchant page (another origin): success fires only after PAID, not at detection or confirming', { timeout: 180_000 }, async () => {
    const intent = await createIntent({ amount: '1.25', description: 'Widget order' });
    const page = await e.ctx.newPage();
    await page.goto(e.merchantUrl);
    expect(await page.evaluate((id) => (window as unknown as { openCheckout(id: string): boolean }).openCheckout(id), intent.id)).toBe(true);
    const events = () => page.evaluate(() => (window as unknown as { events: Array<{ t: string; status: string }> }).events);
    const waitStatus = (status: string) =>
      page.waitForFunction((s) => (window as unknown as { events: Array<{ t: string; status: string }> }).events.some((e) => e.t === 'status' && e.status === s), status, {
        timeout: 20_000,
      });
    await waitStatus('AWAITING_PAYMENT');
    const frame = page.frameLocator('iframe[title="ANM Pay checkout"]');
    await frame.locator('anm-status section[data-status="AWAITING_PAYMENT"]').waitFor();
    await shot(page, '10-widget-open');

    await cli(['wallet', 'pay', intent.id, '--wallet', e.wallet]);
    await waitStatus('PAYMENT_DETECTED');
    expect((await events()).filter((e) => e.t === 'success')).toEqual([]);

    await cli(['devnet', 'mine', '1']);
    await waitStatus('CONFIRMING');
    expect((await events()).filter((e) => e.t === 'success')).toEqual([]);
    await shot(page, '11-widget-confirming');

    await cli(['devnet', 'mine', '11']);
    await page.waitForFunction(() => (window as unknown as { events: Array<{ t: string }> }).events.some((e) => e.t === 'success'), undefined, { timeout: 20_000 });
    const seen = await events();
    const successAt = seen.findIndex((e) => e.t === 'success');
    expect(seen.filter((e) => e.t === 'success')).toEqual([{ t: 'success', status: 'PAID', id: intent.id }]);
    expect(seen.slice(0, successAt).map((e) => e.status)).toEqual(expect.arrayContaining(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'PAID']));
    expect(seen.slice(0, successAt).at(-1)).toEqual({ t: 'status', status: 'PAID' });
    await frame.locator('anm-status section[data-status="PAID"]').waitFor();
    await shot(page, '12-widget-paid');

    // Done (inside the iframe) closes the modal through the protocol; closing after success is not a cancel.
    await frame.locator('button.done').click();
    await page.locator('iframe').waitFor({ state: 'detached' });
    expect(await page.locator('iframe').count()).toBe(0);
    expect((await events()).filter((e) => e.t === 'cancel')).toEqual([]);
    await page.close();
  });

  it('widget.js: a forged PAID message is ignored; closing before payment fires cancel; a secret key is refused loudly and never sent', { timeout: 60_000 }, async () => {
    const intent = await createIntent({ amount: '1' });
    const page = await e.ctx.newPage();
    const consoleErrors: string[] = [];
    const requested: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('request', (r) => requested.push(r.url() + (r.postData() ?? '')));
    await page.goto(e.merchantUrl);
    await page.evaluate((id) => (window as unknown as { openCheckout(id: string): boolean }).openCheckout(id), intent.id);
    await page.waitForFunction(() => (window as unknown as { events: Array<{ t: string }> }).events.some((e) => e.t === 'status'), undefined, { timeout: 20_000 });
    // A forged PAID from the merchant page's own window (wrong origin and source) is ignored.
    await page.evaluate((id) => {
      const status = { version: 99, status: 'PAID', confirmations: 12, required_confirmations: 12, transaction_hash: 'forged', final: true };
      window.postMessage({ source: 'anm-pay-checkout', v: 1, type: 'status', intent: id, status }, '*');
    }, intent.id);
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { events: Array<{ t: string; status: string }> }).events.filter((e) => e.t === 'success' || e.status === 'PAID'))).toEqual([]);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => (window as unknown as { events: Array<{ t: string }> }).events.some((e) => e.t === 'cancel'));
    expect(await page.locator('iframe').count()).toBe(0);

    const secret = `ask_test_${'S'.repeat(32)}`;
    const opened = await page.evaluate(
      ([key, id]) => {
        const w = window as unknown as { AnmPay(k: string): { open(id: string): unknown } };
        return w.AnmPay(key!).open(id!);
      },
      [secret, intent.id],
    );
    expect(opened).toBeNull();
    expect(await page.locator('iframe').count()).toBe(0);
    expect(consoleErrors.some((e) => e.includes('SECRET key'))).toBe(true);
    await page.waitForTimeout(300);
    expect(requested.filter((u) => u.includes('ask_'))).toEqual([]);
    // The publishable key is what the iframe carried.
    expect(requested.some((u) => u.includes(`pk=${e.publishableKey}`))).toBe(true);
    await page.close();
  });

  it('an underpaid intent shows underpaid, with no progress bar, and says what the customer can do', { timeout: 120_000 }, async () => {
    const intent = await createIntent({ amount: '1' });
    const page = await e.ctx.newPage();
    await page.goto(`${e.svc}/c/${intent.id}`);
    await statusBox(page, 'AWAITING_PAYMENT').waitFor();
    const short = BigInt(intent.anm_amount) - 100_000_000n;
    await cli(['wallet', 'pay', intent.id, '--wallet', e.wallet, '--amount-nanm', short.toString()]);
    await statusBox(page, 'UNDERPAID').waitFor({ timeout: 20_000 });
    await expect(page.locator('anm-status h2').textContent()).resolves.toBe('Underpaid');
    const said = (await page.locator('anm-status p').first().textContent())!.replace(/\s+/g, ' ');
    expect(said).toMatch(/short by 0\.1 ANM/);
    expect(said).toMatch(/What you can do: contact E2E <Shop> & Co and give them the transaction below; they can refund what you sent or ask you to pay a new request/);
    await expect(page.locator('anm-status .tx code').textContent()).resolves.toMatch(/^[0-9a-f]{64}$/);
    // Depth is not progress here: nothing the customer could wait for completes this payment.
    await cli(['devnet', 'mine', '2']);
    await page.waitForTimeout(500);
    expect(await page.locator('anm-status progress').count()).toBe(0);
    expect(await page.locator('anm-status .depth').count()).toBe(0);
    expect(await page.locator('a.cta').count()).toBe(0);
    await shot(page, '20-underpaid');
    await page.close();
  });

  it('a description with <script> renders as text', { timeout: 60_000 }, async () => {
    const description = `<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>`;
    const intent = await createIntent({ amount: '3', description });
    const page = await e.ctx.newPage();
    await page.goto(`${e.svc}/c/${intent.id}`);
    await statusBox(page, 'AWAITING_PAYMENT').waitFor();
    await expect(page.locator('anm-checkout .description').textContent()).resolves.toBe(description);
    expect(await page.locator('anm-checkout .description b, anm-checkout .description img, anm-checkout .description script').count()).toBe(0);
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    await shot(page, '30-description-as-text');
    await page.close();
  });

  it('an unknown intent is a 404 page', async () => {
    const page = await e.ctx.newPage();
    const res = await page.goto(`${e.svc}/c/pay_aaaaaaaaaaaaaaaaaaaaaaaa`);
    expect(res?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Checkout not found');
    await shot(page, '40-not-found');
    await page.close();
  });
});
