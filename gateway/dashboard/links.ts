/**
 * Payment links of the session's mode (DESIGN §7 "Payment links"): list with units left, held,
 * sold and oversold flags; create and deactivate (the API's commands); a link's recent holds;
 * and "pay this link" for the merchant itself, the way a test link is paid (its session is the
 * proof the public POST cannot see: the session cookie lives under /dashboard).
 */
import type { FastifyInstance } from 'fastify';
import type { LinkHoldContext } from '../../machines/link-hold/context.ts';
import { holdResource } from '../../machines/link-hold/view.ts';
import { linkCommands } from '../commerce/link-commands.ts';
import { validateLink } from '../commerce/link-input.ts';
import { payLink } from '../commerce/link-pay.ts';
import { AppError } from '../errors.ts';
import { admitDash, type Dash } from './context.ts';

const HOLDS_SHOWN = 50;

export function linkRoutes(app: FastifyInstance, x: Dash): void {
  const commerce = x.d.commerce;
  if (!commerce) return;
  const commands = linkCommands(x.d);

  app.get('/dashboard/api/links', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const page = await commerce.links.list(who.merchant, who.mode, 100);
    return { object: 'list', mode: who.mode, has_more: page?.hasMore ?? false, data: (page?.rows ?? []).map(commands.render) };
  });

  app.post('/dashboard/api/links', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const input = validateLink(req.body ?? {});
    const handle = await commerce.links.handleOf(who.merchant);
    return reply.code(201).send(await commands.create(who.merchant, who.mode, handle, input));
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/links/:id/deactivate', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return commands.deactivate(who.merchant, who.mode, req.params.id);
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/links/:id/holds', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const link = await commands.own(who.merchant, who.mode, req.params.id);
    const holds = await commerce.links.holds(link.id, HOLDS_SHOWN);
    return { object: 'list', data: holds.map((h) => holdResource(h.snapshot.context as LinkHoldContext, h.state)) };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/links/:id/pay', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const link = await commands.own(who.merchant, who.mode, req.params.id);
    const r = await payLink(x.d, link, (req.body as { amount?: unknown } | undefined)?.amount);
    if (r.kind === 'sold_out') throw new AppError('sold_out');
    if (r.kind === 'inactive') throw new AppError('not_found', 'This payment link is not active.');
    return { checkout_url: `/c/${r.intentId}` };
  });
}
