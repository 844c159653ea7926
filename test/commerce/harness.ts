/**
 * Payment-link tests over the whole service in-process (the dashboard harness: real
 * PostgreSQL + NATS when reachable): a merchant with a live payout address, its links through
 * the API, buyers' presses of Pay, and reads of the actors' rows.
 */
import { Merchants } from '../../runtime/merchant/merchants.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { startDashHarness, type DashHarness } from '../dashboard/harness.ts';
import { waitFor } from '../helpers/backends.ts';

export type Json = Record<string, unknown>;

export interface LinkHarness {
  h: DashHarness;
  merchant: CreatedMerchant;
  api(method: string, p: string, key: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Json; headers: Headers }>;
  /** A buyer pressing Pay: the raw response (no redirect followed). */
  pay(p: string, form?: Record<string, string>, headers?: Record<string, string>): Promise<{ status: number; location: string | null; text: string }>;
  actor(id: string): Promise<{ state: string; context: Json } | null>;
  waitState(id: string, state: string, timeoutMs?: number): Promise<Json>;
  close(): Promise<void>;
}

export async function startLinkHarness(env: Record<string, string> = {}): Promise<LinkHarness> {
  const h = await startDashHarness(env);
  const merchant = await h.merchant('Link Shop');
  const payout = await h.cli(['wallet', 'create', '--network', 'live']);
  await new Merchants(h.services.db, Buffer.alloc(32)).setPayoutAddress(merchant.merchant_id, 'live', payout.address as string);
  const actor = async (id: string) => {
    const r = await h.services.db.query<{ state: string; snapshot: { context: Json } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id]);
    const row = r.rows[0];
    return row ? { state: row.state, context: row.snapshot.context } : null;
  };
  return {
    h,
    merchant,
    async api(method, p, key, body, headers = {}) {
      const r = await fetch(`${h.svc}${p}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: (text ? JSON.parse(text) : {}) as Json, headers: r.headers };
    },
    async pay(p, form = {}, headers = {}) {
      const r = await fetch(`${h.svc}${p}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString(), redirect: 'manual' });
      return { status: r.status, location: r.headers.get('location'), text: await r.text() };
    },
    actor,
    waitState: (id, state, timeoutMs = 15_000) =>
      waitFor(async () => {
        const a = await actor(id);
        return a?.state === state ? a.context : null;
      }, timeoutMs, `${id} ${state}`),
    close: () => h.close(),
  };
}
