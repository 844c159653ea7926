/**
 * The dashboard's one way to the server: JSON to and from `/dashboard/api/…` with the page's
 * CSRF token on every write, errors as `ApiError` carrying the envelope's code and message.
 */
let csrf = '';

export function setCsrf(token: string): void {
  csrf = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T = Record<string, unknown>>(path: string, opts: { method?: 'GET' | 'POST'; body?: unknown; query?: Record<string, string | undefined> } = {}): Promise<T> {
  const method = opts.method ?? (opts.body === undefined ? 'GET' : 'POST');
  const qs = opts.query ? new URLSearchParams(Object.entries(opts.query).filter((e): e is [string, string] => !!e[1])).toString() : '';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/dashboard/api/${path}${qs ? `?${qs}` : ''}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : {};
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } }).error;
    if (res.status === 401 && e?.code === 'unauthorized' && !path.startsWith('login')) location.assign('/dashboard/login');
    throw new ApiError(res.status, e?.code ?? 'error', e?.message ?? `Request failed (${res.status}).`);
  }
  return json as T;
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
