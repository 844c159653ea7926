/**
 * A page's one way to its own JSON routes: same origin, the session cookie, the page's CSRF
 * token (header `x-csrf-token`, checked with Origin by the server) on every write, and errors
 * as `ApiError` carrying the envelope's code and message. The dashboard and the operator
 * console each make one client for their prefix.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  query?: Record<string, string | undefined>;
}

export interface JsonClient {
  setCsrf(token: string): void;
  request<T = Record<string, unknown>>(path: string, opts?: RequestOptions): Promise<T>;
}

/** `prefix` is put before every path; `onUnauthorized` runs on a 401 before the error is thrown. */
export function jsonClient(prefix: string, onUnauthorized?: (path: string) => void): JsonClient {
  let csrf = '';
  return {
    setCsrf(token) {
      csrf = token;
    },
    async request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
      const method = opts.method ?? (opts.body === undefined ? 'GET' : 'POST');
      const qs = opts.query ? new URLSearchParams(Object.entries(opts.query).filter((e): e is [string, string] => !!e[1])).toString() : '';
      const headers: Record<string, string> = { accept: 'application/json' };
      if (method !== 'GET') headers['x-csrf-token'] = csrf;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${prefix}${path}${qs ? `?${qs}` : ''}`, {
        method,
        headers,
        credentials: 'same-origin',
        body: opts.body === undefined ? null : JSON.stringify(opts.body),
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : {};
      } catch {
        // A body that is not JSON (a proxy's error page): the status says enough.
      }
      if (!res.ok) {
        const e = (json as { error?: { code?: string; message?: string } } | null)?.error;
        if (res.status === 401 && e?.code === 'unauthorized') onUnauthorized?.(path);
        throw new ApiError(res.status, e?.code ?? 'error', e?.message ?? `Request failed (${res.status}).`);
      }
      return json as T;
    },
  };
}
