/**
 * Admission: a route calls `admit(gate, req, reply, steps)` once and gets `Admitted` or a
 * `Refusal`. Each step may do pure work before the one round trip to the gate (parse the
 * body, name the Idempotency-Key claim or the intent to read) and gives its verdict after it;
 * verdicts are read in the order of the list, so the first refusal in spec order wins
 * whatever was found first. The merchant API's order (spec "Authentication", "Limits",
 * "Errors"): the IP bucket (a request it refuses does not spend the key's quota), the key, its
 * account, the key's bucket, the Idempotency-Key header, the body, the claim. Batching and
 * leases stay behind `Gate.pass` (ADR 0004, 0005). Other apps compose their own lists from
 * these steps and steps of their own (a per-IP bucket of their own, a session cookie).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bucket, Gate, GateInput, GateKey, GateResult } from '../../runtime/merchant/gate.ts';
import { ApiKeyHashes, parseApiKey } from '../../runtime/merchant/secrets.ts';
import { AppError } from '../errors.ts';
import { idempotencyKey, requestHash } from './idempotency.ts';
import { rateHeaders, rateLimited } from './rate-headers.ts';

/** A response recorded for this Idempotency-Key, sent again byte for byte. */
export interface Replay {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type Refusal = { admitted: false; error: AppError; replay?: undefined } | { admitted: false; replay: Replay; error?: undefined };

export interface Admitted<B = unknown> {
  admitted: true;
  /** The secret key and its merchant; null on public routes. */
  key: GateKey | null;
  body: B;
  /** The Idempotency-Key claimed for this request, and the intent id reserved with it. */
  claim: { key: string; intentId: string | null } | null;
  read: GateResult['read'];
}

/** What the steps share: the request, what the round trip carries, and its answer. */
export interface Admission {
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly input: GateInput;
  gate: GateResult | null;
  body: unknown;
  idempotencyKey: string | null;
  /** Refusals found before the trip, reported at their step's turn. */
  held: Map<Step, AppError>;
}

export interface Step {
  /** Before the round trip: pure work, and what the trip must carry (`a.input`). */
  before?(a: Admission): void | Promise<void>;
  /** After it: a refusal, or null to go on. */
  verdict(a: Admission): AppError | Replay | null;
}

export async function admit<B = unknown>(gate: Pick<Gate, 'pass'>, req: FastifyRequest, reply: FastifyReply, steps: readonly Step[]): Promise<Admitted<B> | Refusal> {
  const a: Admission = { req, reply, input: { ip: req.ip, keyHash: null }, gate: null, body: undefined, idempotencyKey: null, held: new Map() };
  for (const s of steps) {
    // Most steps are synchronous: no microtask turn for them.
    const p = s.before?.(a);
    if (p) await p;
  }
  a.gate = await gate.pass(a.input);
  for (const s of steps) {
    const r = s.verdict(a);
    if (r instanceof AppError) return { admitted: false, error: r };
    if (r) return { admitted: false, replay: r };
  }
  const claim = a.gate.claim?.outcome === 'claimed' && a.idempotencyKey !== null ? { key: a.idempotencyKey, intentId: a.gate.claim.intentId } : null;
  return { admitted: true, key: a.gate.key, body: a.body as B, claim, read: a.gate.read };
}

/**
 * The key of a request admitted by steps that claim no idempotency key (reads and commands on
 * one resource): nothing to replay, so a refusal is thrown for the error handler.
 */
export async function admittedKey(gate: Pick<Gate, 'pass'>, req: FastifyRequest, reply: FastifyReply, steps: readonly Step[]): Promise<GateKey> {
  const a = await admit(gate, req, reply, steps);
  if (!a.admitted) throw a.error ?? new AppError('internal_error');
  return a.key!;
}

/** Sends a replay, or throws the refusal for the error handler. */
export function refuse(reply: FastifyReply, r: Refusal): FastifyReply {
  if (r.error) throw r.error;
  return reply.code(200).headers(r.replay.headers).header('idempotent-replay', 'true').send(r.replay.body);
}

/** Runs a step's pre-trip work, holding an AppError it throws until the step's turn. */
function holding(step: Step, a: Admission, work: () => void | Promise<void>): void | Promise<void> {
  const held = (err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    a.held.set(step, err);
  };
  try {
    const p = work();
    if (p) return p.catch(held);
  } catch (err) {
    held(err);
  }
}

const gateOf = (a: Admission): GateResult => a.gate!;

/** The IP bucket, and the X-RateLimit-* headers of whichever dimension is tighter. */
export const ipLimit: Step = {
  verdict(a) {
    const g = gateOf(a);
    rateHeaders(a.reply, g);
    return g.ip.ok ? null : rateLimited(g.ip);
  },
};

// A key in a cookie, or a dashboard session cookie: cookies never authenticate /api/v1.
const KEY_IN_COOKIE = /(?:ask|apk)_(?:live|test)_|(?:^|[;\s])anm_session=/;
const BEARER = /^Bearer +(\S+) *$/i;
const hashesByPepper = new WeakMap<Buffer, ApiKeyHashes>();

/**
 * Keyed hash of the secret key in `Authorization: Bearer`, or null for a missing, malformed
 * or publishable key, or for any request carrying a key or a dashboard session in a cookie
 * (spec Authentication 3, DESIGN §7):
 * all of these end in the same opaque 401.
 */
export function offeredKeyHash(req: FastifyRequest, pepper: Buffer): string | null {
  const cookie = req.headers.cookie;
  if (typeof cookie === 'string' && KEY_IN_COOKIE.test(cookie)) return null;
  const m = BEARER.exec(req.headers.authorization ?? '');
  const key = m?.[1];
  if (!key || parseApiKey(key)?.kind !== 'secret') return null;
  let hashes = hashesByPepper.get(pepper);
  if (!hashes) hashesByPepper.set(pepper, (hashes = new ApiKeyHashes(pepper)));
  return hashes.hash(key);
}

/** A secret key of an active account, then its bucket (spec Authentication 4 and 7, Limits). */
export function secretKey(pepper: Buffer): Step[] {
  return [
    {
      before(a) {
        a.input.keyHash = offeredKeyHash(a.req, pepper);
      },
      verdict: (a) => (gateOf(a).key ? null : new AppError('unauthorized')),
    },
    { verdict: (a) => (gateOf(a).key!.merchantStatus === 'active' ? null : new AppError('forbidden', 'This account is suspended.')) },
    {
      verdict(a) {
        const b: Bucket | null = gateOf(a).keyBucket;
        return b && !b.ok ? rateLimited(b) : null;
      },
    },
  ];
}

/** The Idempotency-Key header's rules (required on intent creation, optional on refunds). */
export function idempotencyHeader(required: boolean): Step {
  const step: Step = {
    before: (a) =>
      holding(step, a, () => {
        a.idempotencyKey = required ? idempotencyKey(a.req) : idempotencyKey(a.req, { optional: true });
      }),
    verdict: (a) => a.held.get(step) ?? null,
  };
  return step;
}

/** The body, parsed and validated before the trip; its refusal is reported after the key's. */
export function body(parse: (req: FastifyRequest) => unknown): Step {
  const step: Step = {
    before: (a) =>
      holding(step, a, () => {
        const v = parse(a.req);
        if (v instanceof Promise) return v.then((x) => void (a.body = x));
        a.body = v;
      }),
    verdict: (a) => a.held.get(step) ?? null,
  };
  return step;
}

/**
 * The claim on the Idempotency-Key (spec Endpoints, Create 1), made in the gate's round trip
 * when every earlier step is content: the same key with another normalised body is 409, a key
 * still in flight 429, a finished one replays its first response.
 */
export function idempotencyClaim<B>(route: string, fingerprint: (body: B) => unknown, newIntentId: (body: B) => string | null = () => null): Step {
  return {
    before(a) {
      if (a.idempotencyKey === null || a.held.size > 0) return;
      const b = a.body as B;
      a.input.claim = { key: a.idempotencyKey, requestHash: requestHash(route, fingerprint(b)), newIntentId: newIntentId(b) };
    },
    verdict(a) {
      const c = gateOf(a).claim;
      if (!c || c.outcome === 'claimed') return null;
      if (c.outcome === 'reused') return new AppError('idempotency_key_reused');
      if (c.outcome === 'in_flight') {
        return new AppError('rate_limited', 'A request with this Idempotency-Key is still being processed.', { retryAfter: 1, headers: { 'Retry-After': '1' } });
      }
      return { status: c.status, headers: c.headers, body: c.body };
    },
  };
}

/** One intent read in the same round trip (GET and cancel by id); null reads nothing. */
export function intentRead(id: (req: FastifyRequest) => string | null): Step {
  return {
    before(a) {
      const v = id(a.req);
      if (v !== null) a.input.readId = v;
    },
    verdict: () => null,
  };
}
