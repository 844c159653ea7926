/**
 * The operator console in headless Chromium against the whole service in-process (issue 24
 * "What must be shown"): log in with the operator token, the overview, a payment intent's
 * statechart lit in AWAITING_PAYMENT and moving to CONFIRMING and PAID live while the CLI pays
 * and mines, the journal growing, verify saying equal, and a snapshot corrupted in the
 * database (test only) making verify say different. Speed: an actor page with a 10,000-entry
 * journal renders under 1 s. Screenshots go to test-artifacts/e2e/ops-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { shot, skipBrowser, startCheckoutE2e, type CheckoutE2e } from './harness.ts';

let e: CheckoutE2e;
let ctx: BrowserContext;

const lit = (page: Page, state: string) => page.locator(`anm-statechart g.state[data-id="${state}"][data-active="true"]`);
const journalRows = (page: Page) => page.locator('anm-ops-journal tbody tr');

async function login(page: Page): Promise<void> {
  await page.goto(`${e.svc}/ops`);
  if (new URL(page.url()).pathname === '/ops') return; // the context's session is still good
  expect(new URL(page.url()).pathname).toBe('/ops/login');
  await page.locator('anm-ops-login input[name="token"]').fill(e.services.config.ANMPAY_OPERATOR_TOKEN!);
  await page.locator('anm-ops-login button[type="submit"]').click();
  await page.waitForURL(`${e.svc}/ops`);
  // The token went in a POST body only: never in an address the browser visited.
  expect(page.url()).not.toContain(e.services.config.ANMPAY_OPERATOR_TOKEN!);
}

describe.skipIf(skipBrowser)('operator console in headless Chromium', () => {
  beforeAll(async () => {
    e = await startCheckoutE2e();
    ctx = await e.browser.newContext({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
  }, 120_000);

  afterAll(async () => {
    await ctx?.close().catch(() => undefined);
    await e?.close();
  }, 60_000);

  it('logs in, shows the overview, and follows a payment intent live from AWAITING_PAYMENT to PAID; verify says equal, then different after corruption', { timeout: 180_000 }, async () => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${e.svc}/ops/actors`);
    expect(new URL(page.url()).pathname).toBe('/ops/login');
    await login(page);
    const intent = await e.createIntent({ amount: '2.5', description: 'ops console e2e' });
    // The overview is live: the new intent's commit reaches it over the stream.
    await page.locator('anm-ops-overview #recent').waitFor();
    await page.locator('anm-ops-overview [data-kind="payment_intent"]').waitFor({ timeout: 20_000 });
    await shot(page, 'ops-01-overview');

    await page.goto(`${e.svc}/ops/actors?kind=payment_intent`);
    await page.locator(`anm-ops-actors a[href="/ops/actors/${intent.id}"]`).waitFor();
    await shot(page, 'ops-01b-actors');
    await page.locator(`anm-ops-actors a[href="/ops/actors/${intent.id}"]`).click();
    await lit(page, 'AWAITING_PAYMENT').waitFor();
    await page.locator('anm-ops-actor .badge.ok', { hasText: 'following' }).waitFor();
    const before = await journalRows(page).count();
    expect(before).toBe(1);
    await shot(page, 'ops-02-awaiting-payment');

    await e.cli(['wallet', 'pay', intent.id, '--wallet', e.wallet]);
    await lit(page, 'PAYMENT_DETECTED').waitFor({ timeout: 20_000 });
    await e.cli(['devnet', 'mine', '1']);
    await lit(page, 'CONFIRMING').waitFor({ timeout: 20_000 });
    expect(await lit(page, 'AWAITING_PAYMENT').count()).toBe(0);
    await shot(page, 'ops-03-confirming');

    await e.cli(['devnet', 'mine', '11']);
    await lit(page, 'PAID').waitFor({ timeout: 20_000 });
    await expect.poll(() => journalRows(page).count(), { timeout: 10_000 }).toBeGreaterThan(before + 2);
    expect(await page.locator('anm-ops-journal tbody tr').first().locator('td').nth(2).textContent()).toContain('PAID');
    await shot(page, 'ops-04-paid');

    await page.locator('anm-ops-actor #verify').click();
    await page.locator('anm-ops-actor [data-verdict="equal"]').waitFor({ timeout: 10_000 });
    await page.locator('anm-ops-actor #verify:not([disabled])').waitFor();
    await shot(page, 'ops-05-verify-equal');

    // Test only: a snapshot the journal does not explain.
    await e.services.db.query(`UPDATE actors SET snapshot = jsonb_set(snapshot, '{context,merchant_amount}', '"999"') WHERE id = $1`, [intent.id]);
    await page.locator('anm-ops-actor #verify').click();
    await page.locator('anm-ops-actor [data-verdict="different"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('anm-ops-actor [data-verdict="different"]').textContent()).toContain('context.merchant_amount: stored "999", replayed "2450000000"');
    await page.locator('anm-ops-actor #verify:not([disabled])').waitFor();
    await shot(page, 'ops-06-verify-different');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('an actor page with a 10,000-entry journal (paged) renders in under 1 s', { timeout: 120_000 }, async () => {
    const intent = await e.createIntent({ amount: '1', description: 'long journal' });
    // A long history: the create event's journal row repeated as seqs 2..10001 (the page reads
    // one page of it; the rows' content does not matter to the renderer).
    await e.services.db.query(
      `INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
       SELECT actor_id, g, event_id || ':' || g, event, state_after, state_after, at + g * interval '1 second'
         FROM actor_events, generate_series(2, 10001) g WHERE actor_id = $1 AND seq = 1`,
      [intent.id],
    );
    await e.services.db.query(`UPDATE actors SET version = 10001 WHERE id = $1`, [intent.id]);
    const page = await ctx.newPage();
    await login(page);
    // Warm: the bundle is cached by the browser, as on any page after the first.
    await page.goto(`${e.svc}/ops/actors/${intent.id}`);
    await journalRows(page).nth(49).waitFor();
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await page.goto(`${e.svc}/ops/actors/${intent.id}`);
      await lit(page, 'AWAITING_PAYMENT').waitFor();
      await journalRows(page).nth(49).waitFor();
      runs.push(performance.now() - t0);
    }
    const median = [...runs].sort((a, b) => a - b)[1]!;
    console.log(`[ops] actor page with a 10,000-entry journal: ${runs.map((r) => `${r.toFixed(0)} ms`).join(', ')} (navigation to statechart lit + first 50 journal rows)`);
    expect(await journalRows(page).count()).toBe(50);
    expect(await journalRows(page).first().getAttribute('data-seq')).toBe('10001');
    await page.locator('anm-ops-journal #older').click();
    await page.locator('anm-ops-journal tbody tr[data-seq="9951"]').waitFor();
    await shot(page, 'ops-07-long-journal');
    expect(median).toBeLessThan(1000);
    await page.close();
  });
});
