/**
 * Invoices from the dashboard (DESIGN §7): list, create, finalize, void and mark
 * uncollectible in the session's mode, through the same commands as `/api/v1/invoices`.
 */
import type { FastifyInstance } from 'fastify';
import { invoiceCommands } from '../invoices/commands.ts';
import { validateInvoice } from '../invoices/input.ts';
import { validateInvoiceList } from '../invoices/api.ts';
import { admitDash, type Dash } from './context.ts';

export function invoiceRoutes(app: FastifyInstance, x: Dash): void {
  if (!x.d.invoices) return;
  const commands = invoiceCommands(x.d);

  app.get('/dashboard/api/invoices', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return commands.list(who, validateInvoiceList(req.query));
  });

  app.post('/dashboard/api/invoices', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const res = await commands.create(who, validateInvoice(req.body), null);
    return reply.code(res.status).send(res.body);
  });

  for (const [path, cmd] of [
    ['finalize', 'finalize'],
    ['void', 'void'],
    ['mark-uncollectible', 'mark_uncollectible'],
  ] as const) {
    app.post<{ Params: { id: string } }>(`/dashboard/api/invoices/:id/${path}`, async (req, reply) => {
      const who = await admitDash(x, req, reply);
      return commands.command(who, req.params.id, cmd);
    });
  }
}
