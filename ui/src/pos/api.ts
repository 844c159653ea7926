/** The point of sale's way to `/pos/api/…` (the shared JSON client); a lost session goes to the login. */
import { jsonClient, type RequestOptions } from '../shared/json-client.ts';

export interface PosPageData {
  csrf: string;
  mode: 'test' | 'live';
  merchant: string;
  /** `ANM` first, then the fiat currencies the rate source quotes. */
  currencies: string[];
}

export interface Sale {
  id: string;
  status: string;
  currency: string;
  requested_amount: string | null;
  anm_amount_formatted: string;
  description: string | null;
  created_at: string | null;
}

export interface SalesDay {
  totals: { count: number; paid_count: number; paid_anm_formatted: string };
  data: Sale[];
}

const client = jsonClient('/pos/api/', () => location.assign('/dashboard/login'));

export const setCsrf = (token: string): void => client.setCsrf(token);

export function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  return client.request<T>(path, opts);
}
