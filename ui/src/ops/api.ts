/**
 * The console's requests to its own JSON: same origin, the session cookie, and on writes the
 * CSRF token of the page (header `x-csrf-token`, checked with Origin by the server).
 */
let csrfToken = '';

export function setCsrf(token: string): void {
  csrfToken = token;
}

export class OpsRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function opsFetch<T>(path: string, init: { method?: 'GET' | 'POST'; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['x-csrf-token'] = csrfToken;
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
  const json = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const msg = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${res.status}`;
    throw new OpsRequestError(res.status, msg);
  }
  return json as T;
}
