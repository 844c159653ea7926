/**
 * `/api/v1/invoices` (DESIGN §7 "Invoices"): create a draft, list, retrieve, finalize, void,
 * mark uncollectible. Secret key on every route, as the rest of `/api/v1`; the create takes an
 * optional Idempotency-Key with the intents' rules (same key and body: the first response
 * replayed; another body: 409). Commands are in commands.ts, shared with the dashboard.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INVOICE_STATUSES } from '../../machines/invoice/view.ts';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, admittedKey, body, idempotencyClaim, idempotencyHeader, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { isPlainObject, jsonBody } from '../http/body.ts';
import { sendKeyedCreate } from '../http/keyed-create.ts';
import { sendJson } from '../http/reply.ts';
import { invoiceCommands } from './commands.ts';
import { validateInvoice, type InvoiceInput } from './input.ts';

const CREATE_ROUTE = 'POST /api/v1/invoices';

export function validateInvoiceList(query: unknown): { limit: number; status?: string; startingAfter?: string } {
  const q = isPlainObject(query) ? query : {};
  const unknown = Object.keys(q).find((k) => !['limit', 'status', 'starting_after'].includes(k));
  if (unknown !== undefined) throw new AppError('bad_request', 'Query parameters: limit (1-100), status and starting_after only.');
  if (q.status !== undefined && (typeof q.status !== 'string' || !(INVOICE_STATUSES as readonly string[]).includes(q.status))) throw new AppError('invalid_status');
  const limit = q.limit === undefined ? 20 : typeof q.limit === 'string' && /^[0-9]{1,3}$/.test(q.limit) ? Number(q.limit) : NaN;
  if (!(limit >= 1 && limit <= 100)) throw new AppError('bad_request', 'limit must be an integer from 1 to 100.');
  if (q.starting_after !== undefined && typeof q.starting_after !== 'string') throw new AppError('bad_request', 'starting_after must be one invoice id.');
  return { limit, ...(q.status === undefined ? {} : { status: q.status }), ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }) };
}

export default async function invoicesApi(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const commands = invoiceCommands(d);
  const keyed = [ipLimit, ...secretKey(d.pepper)];
  const createSteps = [...keyed, idempotencyHeader(false), body((req) => validateInvoice(jsonBody(req))), idempotencyClaim<InvoiceInput>(CREATE_ROUTE, (b) => b)];

  const admitKey = (req: FastifyRequest, reply: FastifyReply): Promise<GateKey> => admittedKey(d.gate, req, reply, keyed);

  app.post('/api/v1/invoices', { config: { admission: createSteps } }, async (req, reply) => {
    const a = await admit<InvoiceInput>(d.gate, req, reply, createSteps);
    if (!a.admitted) return refuse(reply, a);
    return sendKeyedCreate(d.idempotency, reply, a, commands.create);
  });

  app.get('/api/v1/invoices', async (req, reply) => {
    const key = await admitKey(req, reply);
    sendJson(reply, 200, await commands.list(key, validateInvoiceList(req.query)));
    return reply;
  });

  app.get<{ Params: { id: string } }>('/api/v1/invoices/:id', async (req, reply) => {
    const key = await admitKey(req, reply);
    sendJson(reply, 200, await commands.get(key, req.params.id));
    return reply;
  });

  for (const [path, cmd] of [
    ['finalize', 'finalize'],
    ['void', 'void'],
    ['mark-uncollectible', 'mark_uncollectible'],
  ] as const) {
    app.post<{ Params: { id: string } }>(`/api/v1/invoices/:id/${path}`, { config: { admission: keyed } }, async (req, reply) => {
      const key = await admitKey(req, reply);
        sendJson(reply, 200, await commands.command(key, req.params.id, cmd));
      return reply;
    });
  }
}
