/**
 * The dashboard's one way to the server: the shared JSON client on `/dashboard/api/…`; a lost
 * session sends the page back to the login form.
 */
import { jsonClient, type RequestOptions } from '../shared/json-client.ts';

export { ApiError } from '../shared/json-client.ts';

const client = jsonClient('/dashboard/api/', (path) => {
  if (!path.startsWith('login')) location.assign('/dashboard/login');
});

export const setCsrf = (token: string): void => client.setCsrf(token);

export function api<T = Record<string, unknown>>(path: string, opts: RequestOptions = {}): Promise<T> {
  return client.request<T>(path, opts);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Formats an ISO time for people, in their locale. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A text field of a submitted form ('' when absent or a file). */
export function field(form: EventTarget | null, name: string): string {
  const v = new FormData(form as HTMLFormElement).get(name);
  return typeof v === 'string' ? v : '';
}
