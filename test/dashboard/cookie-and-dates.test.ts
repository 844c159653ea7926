/**
 * What docs/dashboard.md "Sessions and security" says of the login cookie (the paths it is
 * sent to, and why), and the payments list's dates (`from`, `to`) on the calendar: a day the
 * month lacks is 400, not a 500 nor the next month.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from './harness.ts';

let h: DashHarness;
let a: CreatedMerchant;
let ca: DashClient;
let login: Awaited<ReturnType<DashClient['req']>>;

beforeAll(async () => {
  h = await startDashHarness();
  a = await h.merchant('Shop A');
  ca = dashClient(h.svc);
  login = await ca.login(a.dashboard.email, a.dashboard.password);
  expect(login.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('the login cookie (docs/dashboard.md "Sessions and security")', () => {
  it('is set on /dashboard, /pos and /p (the point of sale and test-mode links need the login) and on no other path', () => {
    const cookies = login.headers.getSetCookie().filter((c) => c.startsWith('anm_session='));
    const paths = cookies.map((c) => /;\s*Path=([^;]*)/i.exec(c)?.[1]).sort();
    expect(paths).toEqual(['/dashboard', '/p', '/pos']);
    for (const c of cookies) expect(c).toMatch(/HttpOnly/i);
  });
});

describe('GET /dashboard/api/payments from/to (RFC 3339 full-date)', () => {
  it.each<[string, number]>([
    ['from=2028-02-29', 200],
    ['to=2028-02-29', 200],
    ['from=2030-02-28&to=2030-12-31', 200],
    ['from=2030-02-29', 400],
    ['to=2030-02-30', 400],
    ['from=2030-04-31', 400],
    ['to=2030-13-01', 400],
    ['from=2030-00-10', 400],
  ])('%s → %i', async (q, status) => {
    const r = await ca.req('GET', `/dashboard/api/payments?${q}`);
    expect([r.status, r.status === 400 ? r.json.error?.code : 'ok']).toEqual([status, status === 400 ? 'invalid_body' : 'ok']);
  });
});
