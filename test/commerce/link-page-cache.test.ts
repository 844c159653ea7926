/**
 * The product page `/p/{handle}/{slug}` rendered once per link version: the same bytes and
 * ETag while the link is unchanged, a 304 for a browser revalidating its copy, and units left
 * that move with every hold (the link's version is read on every request).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkReads } from '../../runtime/commerce/links.ts';
import { startLinkHarness, type LinkHarness } from './harness.ts';

let t: LinkHarness;

beforeAll(async () => {
  t = await startLinkHarness();
}, 120_000);
afterAll(() => t?.close());

describe('link page per version', () => {
  it('same ETag while unchanged, 304 on If-None-Match, units left live after a press', async () => {
    const made = await t.api('POST', '/api/v1/payment-links', t.merchant.keys.live.secret, { slug: 'cached', title: 'Cached', amount: '1', units_total: 3 });
    expect(made.status).toBe(201);
    const p = `/p/${t.merchant.handle}/cached`;
    const get = (headers: Record<string, string> = {}) => fetch(`${t.h.svc}${p}`, { headers });
    const first = await get();
    const etag = first.headers.get('etag')!;
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(first.headers.get('content-security-policy')).toContain("form-action 'self'");
    const html = await first.text();
    expect(html).toContain('3 of 3 left');
    const second = await get();
    expect(second.headers.get('etag')).toBe(etag);
    expect(await second.text()).toBe(html);
    const revalidated = await get({ 'if-none-match': `W/${etag}` });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');

    expect((await t.pay(p)).status).toBe(303);
    const after = await get({ 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(await after.text()).toContain('2 of 3 left');
  });

  it('the read returns the snapshot only when the caller has not got that version', async () => {
    await t.api('POST', '/api/v1/payment-links', t.merchant.keys.live.secret, { slug: 'known', title: 'Known', amount: '1' });
    const reads = new LinkReads(t.h.services.db);
    const fresh = await reads.page(t.merchant.handle, 'known');
    expect(fresh?.snapshot).not.toBeNull();
    expect(fresh).toMatchObject({ state: 'ACTIVE', mode: 'live', merchant_name: 'Link Shop' });
    expect(await reads.page(t.merchant.handle, 'known', { id: fresh!.id, version: fresh!.version })).toMatchObject({ id: fresh!.id, version: fresh!.version, snapshot: null });
    expect((await reads.page(t.merchant.handle, 'known', { id: 'plink_other', version: fresh!.version }))?.snapshot).toEqual(fresh!.snapshot);
    expect(await reads.page(t.merchant.handle, 'absent')).toBeNull();
  });
});
