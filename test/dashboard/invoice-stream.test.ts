/**
 * The dashboard's invoices follow their actors (DESIGN §7 "Invoices", ADR 0048): the list
 * carries each invoice's actor version, and `/dashboard/api/invoices/events` sends every
 * invoice of the login's merchant and mode from the snapshot feed as it changes, with its
 * version, and nothing of another merchant or mode.
 */
import { readSse } from '../helpers/sse.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { waitFor } from '../helpers/backends.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from './harness.ts';

let h: DashHarness;
let a: CreatedMerchant;
let b: CreatedMerchant;
let ca: DashClient;

beforeAll(async () => {
  h = await startDashHarness();
  a = await h.merchant('Invoices A');
  b = await h.merchant('Invoices B');
  ca = dashClient(h.svc);
  expect((await ca.login(a.dashboard.email, a.dashboard.password)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

interface Seen {
  id: string;
  status: string;
  version: number;
}

function invoiceStream(cookie: string) {
  const seen: Seen[] = [];
  const s = readSse(`${h.svc}/dashboard/api/invoices/events`, cookie, (b) => {
    if (b.event !== 'invoice') return;
    const m = JSON.parse(b.data) as { invoice: { id: string; status: string }; version: number };
    seen.push({ id: m.invoice.id, status: m.invoice.status, version: m.version });
  });
  const open = s.open.then((headers) => {
    expect(headers['content-type']).toContain('text/event-stream');
  });
  return { seen, open, close: s.close };
}

async function invoice(key: string, finalize: boolean): Promise<string> {
  const call = async (p: string, body?: unknown) => {
    const r = await fetch(`${h.svc}${p}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    expect(r.status).toBeLessThan(300);
    return (await r.json()) as { id: string };
  };
  const made = await call('/api/v1/invoices', { line_items: [{ description: 'Work', quantity: 1, unit_price: '2' }] });
  if (finalize) await call(`/api/v1/invoices/${made.id}/finalize`);
  return made.id;
}

describe('dashboard invoices, live', () => {
  it('the stream sends each of this merchant and mode\'s invoices as it changes, with its version; the list carries the same versions', async () => {
    const s = invoiceStream(ca.cookie);
    await s.open;
    try {
      const mine = await invoice(a.keys.test.secret, true);
      await invoice(b.keys.test.secret, true);
      await invoice(a.keys.live.secret, true);
      const last = await invoice(a.keys.test.secret, false);
      await waitFor(async () => (s.seen.some((x) => x.id === last) && s.seen.some((x) => x.id === mine && x.status === 'OPEN')) || undefined, 15_000, 'both on the stream');
      // Each invoice's versions in order; nothing of merchant B or of live mode.
      expect(s.seen.filter((x) => x.id === mine).map((x) => x.status)).toEqual(['DRAFT', 'OPEN']);
      expect(s.seen.filter((x) => x.id === last).map((x) => x.status)).toEqual(['DRAFT']);
      expect(s.seen).toHaveLength(3);
      const list = (await ca.req('GET', '/dashboard/api/invoices')).json.data as Array<{ id: string; status: string; version: number }>;
      expect(list.map((r) => [r.id, r.status, r.version])).toEqual([
        [last, 'DRAFT', 1],
        [mine, 'OPEN', s.seen.find((x) => x.id === mine && x.status === 'OPEN')!.version],
      ]);
    } finally {
      s.close();
    }
  });

  it('spec Authentication 8: without a session the stream is refused', async () => {
    const r = await fetch(`${h.svc}/dashboard/api/invoices/events`);
    expect(r.status).toBe(401);
    await r.body?.cancel();
  });
});
