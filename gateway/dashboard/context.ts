/**
 * What every dashboard route shares: the services, the session layer, who is asking and in
 * which mode, and the admission steps (the per-IP bucket of the merchant API, then the
 * session) run through `admit` as the API's routes do.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { DashboardServices } from '../../runtime/dashboard/index.ts';
import type { Mode } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, ipLimit, type Step } from '../http/admission.ts';
import type { Sessions } from '../http/sessions/index.ts';
import { openSse, type SseStream } from '../http/sse.ts';

export interface Dash {
  d: GatewayDeps;
  svc: DashboardServices;
  s: Sessions;
}

export interface Who {
  merchant: string;
  mode: Mode;
  sessionId: string;
}

/** The session of a logged-in merchant (loaded by the session layer's hook). */
const signedIn: Step = {
  verdict: (a) => (a.req.anmSession?.principal ? null : new AppError('unauthorized', 'Log in first.')),
};

export function modeOf(req: FastifyRequest): Mode {
  return req.anmSession?.data.mode === 'live' ? 'live' : 'test';
}

/** Admits a dashboard API request: the IP bucket, then a logged-in session; throws the refusal. */
export async function admitDash(x: Dash, req: FastifyRequest, reply: FastifyReply, opts: { public?: boolean } = {}): Promise<Who> {
  const a = await admit(x.d.gate, req, reply, opts.public ? [ipLimit] : [ipLimit, signedIn]);
  if (!a.admitted) throw a.error ?? new AppError('internal_error');
  const s = req.anmSession;
  return { merchant: s?.principal ?? '', mode: modeOf(req), sessionId: s?.id ?? '' };
}

/** The JSON body checked against a zod schema: 400 `invalid_body` naming the first problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    const i = r.error.issues[0];
    throw new AppError('invalid_body', i ? `${i.path.join('.') || 'body'}: ${i.message}` : undefined);
  }
  return r.data;
}

/** The dashboard's open SSE streams (payment timelines, refund status), capped together. */
export interface StreamBook {
  /** Throws 429 `rate_limited` when the process already holds the most streams it serves. */
  admit(): void;
  /** Takes the reply over as a stream; `onClose` runs once when either side ends it. */
  open(req: FastifyRequest, reply: FastifyReply, onClose: () => void): SseStream;
}

const MAX_STREAMS = 10_000;

export function streamBook(app: FastifyInstance): StreamBook {
  const open = new Set<SseStream>();
  app.addHook('preClose', async () => {
    for (const s of [...open]) s.close();
  });
  return {
    admit() {
      if (open.size >= MAX_STREAMS) throw new AppError('rate_limited', 'Too many open event streams.', { retryAfter: 5, headers: { 'Retry-After': '5' } });
    },
    open(req, reply, onClose) {
      const stream = openSse(req, reply, () => {
        open.delete(stream);
        onClose();
      });
      open.add(stream);
      return stream;
    },
  };
}
