/**
 * Settings of the session's mode: the payout address, verified by a signature over a
 * challenge (`anmpay payout verify` prints it), and the origins allowed to embed the checkout
 * with the widget; and the shop directory opt-in.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PayoutView } from '../../runtime/merchant/payout.ts';
import { AppError } from '../errors.ts';
import { admitDash, parseBody, type Dash } from './context.ts';

const SetAddress = z.strictObject({ address: z.string().min(1).max(200) });
const Proof = z.strictObject({ signature: z.string().min(1).max(20_000) });
const Origins = z.strictObject({ origins: z.array(z.string().max(2048)).max(50) });
const Shop = z.strictObject({ listed: z.boolean(), description: z.string().max(300).default('') });

/** The view, with the exact command that signs the open challenge. */
const withCommand = (v: PayoutView) => ({ ...v, command: v.challenge ? `anmpay payout verify --challenge ${v.challenge} --wallet <payout wallet file>` : null });

export function settingsRoutes(app: FastifyInstance, x: Dash): void {
  const payout = x.svc.payout;

  app.get('/dashboard/api/payout', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return withCommand(await payout.get(who.merchant, who.mode));
  });

  app.post('/dashboard/api/payout', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { address } = parseBody(SetAddress, req.body);
    return withCommand(await payout.set(who.merchant, who.mode, address));
  });

  app.post('/dashboard/api/payout/verify', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { signature } = parseBody(Proof, req.body);
    return withCommand(await payout.verify(who.merchant, who.mode, signature));
  });

  app.get('/dashboard/api/origins', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const m = await x.svc.accounts.profile(who.merchant);
    if (!m) throw new AppError('unauthorized', 'Log in first.');
    return { origins: m.allowed_origins };
  });

  app.post('/dashboard/api/origins', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { origins } = parseBody(Origins, req.body);
    const stored = await x.d.merchants.setAllowedOrigins(who.merchant, origins);
    return { origins: stored ?? [] };
  });

  // The shop directory opt-in (DESIGN §7 "Shop"): the merchant's, in either mode; shown only
  // with a verified live payout address.
  app.get('/dashboard/api/shop', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return { ...(await x.svc.shop.setting(who.merchant)), directory_enabled: x.svc.shopDirectory };
  });

  app.post('/dashboard/api/shop', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const s = parseBody(Shop, req.body);
    return { ...(await x.svc.shop.set(who.merchant, { listed: s.listed, description: s.description.trim() })), directory_enabled: x.svc.shopDirectory };
  });
}
