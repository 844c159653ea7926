/**
 * The console's requests to its own JSON: the shared client (same origin, the session cookie,
 * the page's CSRF token on writes), paths given whole.
 */
import { jsonClient, type RequestOptions } from '../shared/json-client.ts';

const client = jsonClient('');

export const setCsrf = (token: string): void => client.setCsrf(token);

export function opsFetch<T>(path: string, init: Pick<RequestOptions, 'method' | 'body'> = {}): Promise<T> {
  return client.request<T>(path, { method: init.method ?? 'GET', ...(init.body === undefined ? {} : { body: init.body }) });
}
