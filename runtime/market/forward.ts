/**
 * The one HTTP call of a routed execution (DESIGN §5 "Routed execution"): the buyer's payment
 * header to the listing's endpoint, with the webhook SSRF rules (runtime/webhooks/url-policy.ts,
 * checked again at connect time against DNS rebinding), a timeout, no redirects followed
 * (node:http never follows one: a 3xx is the seller's answer) and a cap on the answer's size.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { WebhookError } from '../webhooks/errors.ts';
import { blockedReason, guardedLookup, parseWebhookUrl, validateWebhookUrl, type LookupAll } from '../webhooks/url-policy.ts';

/**
 * Connections to sellers are kept open between executions: a busy seller is called again and
 * again, and a new TCP (and TLS) handshake per call would be most of the added latency. The
 * SSRF check of `guardedLookup` runs whenever a connection is made; a kept one was checked then.
 */
// Idle connections are closed before a Node seller's default keep-alive (5 s) would close them
// under a call just sent on one.
const keep = { keepAlive: true, scheduling: 'lifo', maxFreeSockets: 64, timeout: 4_000 } as const;
/** One pair per SSRF switch, so a connection made with private targets allowed never serves a call that refuses them. */
const agents = {
  strict: { http: new http.Agent(keep), https: new https.Agent(keep) },
  allowPrivate: { http: new http.Agent(keep), https: new https.Agent(keep) },
};

/** The largest seller answer passed back (docs/marketplace.md "Routed execution"). */
export const MAX_SELLER_BODY_BYTES = 1024 * 1024;
export const SELLER_TIMEOUT_MS = 30_000;

export interface ForwardOptions {
  /** ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 (development): private, loopback and link-local targets allowed. */
  allowPrivate: boolean;
  /**
   * Origins (`http://127.0.0.1:3003`) reached even when private: exactly the project's own demo
   * seller, so it works out of the box without opening loopback to every listing (ADR 0037).
   */
  allowOrigin?: ((origin: string) => boolean) | undefined;
  /**
   * Brings `allowOrigin` up to date: the demo seller's origin as another process recorded it
   * (ADR 0073). Run when a target is refused, before the refusal stands, so a seller that
   * started after this process is reached without a read on every call.
   */
  refreshAllowOrigin?: (() => Promise<void>) | undefined;
  timeoutMs?: number;
  maxBodyBytes?: number;
  lookupAll?: LookupAll;
}

export interface ForwardRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Further answer headers to return (lower case), beyond those an execution passes back. */
  answerHeaders?: readonly string[];
}

export type ForwardResult =
  | { ok: true; status: number; headers: Record<string, string | undefined>; body: Buffer }
  /**
   * `sent`: whether the request may have reached the seller (false: refused before any
   * connection). `status`: an answer cut at the size cap still said its status.
   */
  | { ok: false; sent: boolean; reason: string; status?: number };

/**
 * Why a target cannot be called, before anything is recorded or sent: `refused` by the SSRF
 * rules (or not a valid URL), or `unresolvable` (its name has no address now). The scanner
 * scores the two apart (`refused`, `unreachable`); routed execution answers both
 * `502 seller_unreachable`.
 */
export interface TargetProblem {
  kind: 'refused' | 'unresolvable';
  reason: string;
}

/** Refuses a target the SSRF rules forbid, or whose name does not resolve, before anything is recorded or sent. */
export async function checkTarget(raw: string, opts: ForwardOptions): Promise<string | null> {
  return (await targetProblem(raw, opts))?.reason ?? null;
}

/**
 * Targets allowed on a verdict that cannot change, per options: the development switch on, or
 * an address literal outside every blocked range. They need no name looked up, and a listing's
 * endpoint is checked on every execution. Names, and the demo origin (which another process may
 * move), are judged each time.
 */
const settled = new WeakMap<ForwardOptions, Set<string>>();
const SETTLED_KEPT = 1_000;

function allowedForGood(raw: string, opts: ForwardOptions): boolean {
  if (opts.allowPrivate) return true;
  try {
    const host = parseTarget(raw).hostname.replace(/^\[(.*)\]$/, '$1');
    return isIP(host) !== 0 && blockedReason(host) === null;
  } catch {
    return false;
  }
}

export async function targetProblem(raw: string, opts: ForwardOptions): Promise<TargetProblem | null> {
  let known = settled.get(opts);
  if (known?.has(raw)) return null;
  const refused = await refusal(raw, opts);
  if (refused === null && allowedForGood(raw, opts)) {
    if (!known) settled.set(opts, (known = new Set()));
    if (known.size >= SETTLED_KEPT) known.clear();
    known.add(raw);
  }
  if (refused === null || !opts.refreshAllowOrigin || privateAllowed(raw, opts)) return refused;
  // A failed read leaves the last known origin: the refusal stands as it was.
  await opts.refreshAllowOrigin().catch(() => undefined);
  return privateAllowed(raw, opts) ? refusal(raw, opts) : refused;
}

async function refusal(raw: string, opts: ForwardOptions): Promise<TargetProblem | null> {
  try {
    await validateWebhookUrl(raw, { allowPrivate: privateAllowed(raw, opts), ...(opts.lookupAll ? { lookupAll: opts.lookupAll } : {}) });
    return null;
  } catch (e) {
    const kind = e instanceof WebhookError && e.code === 'url_unresolvable' ? 'unresolvable' : 'refused';
    return { kind, reason: (e as Error).message.replace(/^webhook URL refused/, 'seller endpoint refused') };
  }
}

/** Parsed seller URLs by their text: a listing's endpoint never changes, and most calls go to a few. */
const parsed = new Map<string, URL>();
const PARSED_KEPT = 1_000;

function parseTarget(raw: string): URL {
  let url = parsed.get(raw);
  if (url) return url;
  url = parseWebhookUrl(raw);
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(raw, url);
  return url;
}

/** One guarded lookup per SSRF switch rather than a closure per call. */
const lookups = { strict: guardedLookup(false), allowPrivate: guardedLookup(true) };

/**
 * A call made ready and not yet sent: its request built and a connection taken from the pool
 * (or being opened), nothing written to the seller. An execution makes it while the statement
 * that records it is on the wire, so that only the write is left once that statement commits.
 */
export interface PreparedCall {
  /** Writes the request; the 30 s limit runs from here. */
  send(): Promise<ForwardResult>;
  /**
   * Drops the call unsent: nothing reaches the seller. A kept connection the request had taken
   * is closed with it (node:http has no way to hand an unused one back): a refusal costs one.
   */
  cancel(): void;
}

export function forward(req: ForwardRequest, opts: ForwardOptions): Promise<ForwardResult> {
  return prepareCall(req, opts).send();
}

export function prepareCall(req: ForwardRequest, opts: ForwardOptions): PreparedCall {
  const timeoutMs = opts.timeoutMs ?? SELLER_TIMEOUT_MS;
  const cap = opts.maxBodyBytes ?? MAX_SELLER_BODY_BYTES;
  let url: URL;
  try {
    url = parseTarget(req.url);
  } catch (e) {
    return refused({ ok: false, sent: false, reason: (e as Error).message });
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const allowPrivate = privateAllowed(url, opts);
  const why = !allowPrivate && isIP(host) ? blockedReason(host) : null;
  if (why) return refused({ ok: false, sent: false, reason: `seller endpoint refused: ${why}` });
  const tls = url.protocol === 'https:';
  // The allowed demo origin goes in the permissive pair too: pools are per host:port, so its
  // kept connections serve only calls to that same origin.
  const pair = allowPrivate ? agents.allowPrivate : agents.strict;
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  let resolve!: (r: ForwardResult) => void;
  const answer = new Promise<ForwardResult>((r) => (resolve = r));
  const finish = (r: ForwardResult): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    resolve(r);
  };
  const headers = req.body ? { ...req.headers, 'content-length': String(req.body.length) } : req.headers;
  const options = { protocol: url.protocol, hostname: host, port: url.port, path: url.pathname + url.search, method: req.method, agent: tls ? pair.https : pair.http, lookup: allowPrivate ? lookups.allowPrivate : lookups.strict, headers };
  let request: http.ClientRequest;
  try {
    request = (tls ? https : http).request(options, onAnswer);
  } catch (e) {
    // A header value node:http refuses: nothing was sent.
    return refused({ ok: false, sent: false, reason: (e as Error).message });
  }
  function onAnswer(res: http.IncomingMessage): void {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > cap) {
        res.destroy();
        finish({ ok: false, sent: true, reason: `the seller's answer exceeds ${cap} bytes`, ...(res.statusCode !== undefined && { status: res.statusCode }) });
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => {
      const h = res.headers;
      const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);
      finish({
        ok: true,
        status: res.statusCode ?? 502,
        headers: { 'content-type': one(h['content-type']), ...(res.statusCode && res.statusCode >= 300 && res.statusCode < 400 ? { location: one(h.location) } : {}), 'payment-response': one(h['payment-response']), 'x-payment-response': one(h['x-payment-response']), ...Object.fromEntries((req.answerHeaders ?? []).map((n) => [n, one(h[n])])) },
        body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
      });
    });
    res.on('error', (err) => finish({ ok: false, sent: true, reason: describe(err, timeoutMs) }));
  }
  let sent = false;
  let cancelled = false;
  // A connection that fails before the request is written (refused, or its address blocked by
  // the guarded lookup) sent nothing; once written, the seller may have it.
  request.on('error', (err) => finish({ ok: false, sent: sent && (err as NodeJS.ErrnoException).code !== 'EBLOCKEDADDRESS', reason: describe(err, timeoutMs) }));
  return {
    send() {
      // It failed while it waited, before a byte was written: most often a kept connection the
      // seller closed meanwhile. Nothing reached the seller, so a call made now is the call.
      if (done) return cancelled ? answer : prepareCall(req, opts).send();
      sent = true;
      // The whole exchange, connect to the answer's last byte, within the timeout. A plain timer
      // costs less per call than an AbortSignal and its listeners on the request and socket.
      timer = setTimeout(() => {
        finish({ ok: false, sent: true, reason: `no answer within ${timeoutMs} ms` });
        request.destroy();
      }, timeoutMs).unref();
      request.end(req.body ?? undefined);
      return answer;
    },
    cancel() {
      if (sent) return;
      cancelled = true;
      finish({ ok: false, sent: false, reason: 'cancelled before sending' });
      request.destroy();
    },
  };
}

function refused(r: ForwardResult): PreparedCall {
  return { send: () => Promise.resolve(r), cancel: () => undefined };
}

/** The development switch, or the one origin the composition root allows (the demo seller). */
function privateAllowed(target: string | URL, opts: ForwardOptions): boolean {
  if (opts.allowPrivate) return true;
  if (!opts.allowOrigin) return false;
  try {
    return opts.allowOrigin(typeof target === 'string' ? new URL(target).origin : target.origin);
  } catch {
    return false;
  }
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const msg = (e?.message ?? String(err)).slice(0, 300);
  return e?.code && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
}
