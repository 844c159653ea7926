/**
 * The invoice page `/i/{token}` rendered once per invoice version: the same bytes and ETag
 * while the invoice is unchanged, a 304 for a client that has them, a new page the moment the
 * invoice changes, and the read sends no snapshot when the page kept is current.
 */
import { describe, expect, it } from 'vitest';
import { request, useHarness } from './harness.ts';

describe('invoice page per version', () => {
  const h = useHarness();
  const items = [{ description: 'Consulting', quantity: 2, unit_price: '3.5' }];

  it('same ETag while unchanged, 304 on If-None-Match, new page and ETag once voided', async () => {
    const m = await h().merchant();
    const key = m.keys.test.secret;
    const draft = await h().req('POST', '/api/v1/invoices', { key, body: { line_items: items } });
    const inv = (await h().req('POST', `/api/v1/invoices/${(draft.json as { id: string }).id}/finalize`, { key })).json as { id: string; hosted_url: string };
    const path = new URL(inv.hosted_url).pathname;
    const first = await request(h().url, 'GET', path);
    expect(first.status).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers['cache-control']).toBe('no-store');
    const second = await request(h().url, 'GET', path);
    expect(second.headers.etag).toBe(etag);
    expect(second.text).toBe(first.text);
    const revalidated = await request(h().url, 'GET', path, { headers: { 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe('');
    expect((await request(h().url, 'GET', path, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    expect((await h().req('POST', `/api/v1/invoices/${inv.id}/void`, { key })).status).toBe(200);
    const after = await request(h().url, 'GET', path, { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(after.text).toContain('voided');
  });

  it('the read returns the snapshot only when the caller has not got that version', async () => {
    const m = await h().merchant();
    const key = m.keys.test.secret;
    const draft = await h().req('POST', '/api/v1/invoices', { key, body: { line_items: items } });
    const inv = (await h().req('POST', `/api/v1/invoices/${(draft.json as { id: string }).id}/finalize`, { key })).json as { hosted_url: string };
    const token = new URL(inv.hosted_url).pathname.slice(3);
    const reads = h().deps.invoices!;
    const fresh = await reads.pageByToken(token);
    expect(fresh?.snapshot).not.toBeNull();
    expect(fresh?.state).toBe('OPEN');
    const known = await reads.pageByToken(token, { id: fresh!.id, version: fresh!.version });
    expect(known).toMatchObject({ id: fresh!.id, version: fresh!.version, state: 'OPEN', snapshot: null });
    expect((await reads.pageByToken(token, { id: fresh!.id, version: fresh!.version - 1 }))?.snapshot).toEqual(fresh!.snapshot);
  });
});
