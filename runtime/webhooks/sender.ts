import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { blockedReason, guardedLookup } from './url-policy.ts';

/** One HTTP attempt: POST the raw body with the signed headers; never throws. */

export const EXCERPT_BYTES = 1024;
/** More than this in a response body is not read: the socket is dropped instead. */
const MAX_READ_BYTES = 64 * 1024;

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface SendResult {
  /** HTTP status, or null when no response came (refused, reset, timeout, blocked). */
  status: number | null;
  latencyMs: number;
  /** The first ≤ 1 KiB of the response body, cut on a character boundary. */
  excerpt: string | null;
  error: string | null;
}

export interface SenderOptions {
  allowPrivate: boolean;
  /** Sockets kept open per receiver origin; the worker's own limits bound what is in use. */
  maxSockets?: number;
}

/** Keep-alive agents with the SSRF guard on every connection. */
export class Sender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: SenderOptions) {
    const common = { keepAlive: true, maxSockets: opts.maxSockets ?? 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent(common);
    this.httpsAgent = new https.Agent(common);
  }

  send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...r, latencyMs: Math.round(performance.now() - started) });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return Promise.resolve(done({ status: null, excerpt: null, error: 'invalid url' }));
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // IP literals skip the lookup, so the guard runs here for them.
    if (!this.opts.allowPrivate && isIP(host)) {
      const why = blockedReason(host);
      if (why) return Promise.resolve(done({ status: null, excerpt: null, error: `webhook target refused: ${why}` }));
    }
    const isHttps = url.protocol === 'https:';
    const mod = isHttps ? https : http;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendResult, 'latencyMs'>): void => {
        if (settled) return;
        settled = true;
        resolve(done(r));
      };
      const body = Buffer.from(req.body, 'utf8');
      const request = mod.request(
        url,
        {
          method: 'POST',
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          lookup: guardedLookup(this.opts.allowPrivate),
          signal: AbortSignal.timeout(req.timeoutMs),
          headers: { ...req.headers, 'Content-Length': String(body.length) },
        },
        (res) => {
          const status = res.statusCode ?? null;
          const chunks: Buffer[] = [];
          let kept = 0;
          let read = 0;
          res.on('data', (c: Buffer) => {
            read += c.length;
            if (kept < EXCERPT_BYTES) {
              const part = c.subarray(0, EXCERPT_BYTES - kept);
              chunks.push(part);
              kept += part.length;
            }
            if (read > MAX_READ_BYTES) {
              res.destroy();
              finish({ status, excerpt: excerpt(chunks), error: null });
            }
          });
          res.on('end', () => finish({ status, excerpt: excerpt(chunks), error: null }));
          res.on('error', (err) => finish({ status, excerpt: excerpt(chunks), error: describe(err, req.timeoutMs) }));
        },
      );
      request.on('error', (err) => finish({ status: null, excerpt: null, error: describe(err, req.timeoutMs) }));
      request.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function excerpt(chunks: Buffer[]): string | null {
  if (chunks.length === 0) return null;
  // StringDecoder holds back a character cut in half, so the excerpt stays ≤ 1 KiB of UTF-8.
  return new StringDecoder('utf8').write(Buffer.concat(chunks));
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as NodeJS.ErrnoException & { name?: string; cause?: unknown };
  if (e?.name === 'TimeoutError' || (e?.name === 'AbortError' && (e.cause as { name?: string } | undefined)?.name === 'TimeoutError')) return `timeout after ${timeoutMs} ms`;
  if (e?.name === 'AbortError') return `timeout after ${timeoutMs} ms`;
  const msg = (e?.message ?? String(err)).slice(0, 300);
  return e?.code && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
}
