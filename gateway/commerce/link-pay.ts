/**
 * A buyer pressing Pay on a payment link (DESIGN §7): for a limited link, one unit is taken as
 * a hold by the link actor (its guard refuses when none is left: sold out); then the intent is
 * created with `payment_link` and `hold` in its metadata, and the buyer goes to checkout. The
 * hold actor itself is created from the take's outbox row, in the take's transaction, so a
 * unit is never held without a hold that will end.
 */
import type { PaymentLinkContext } from '../../machines/payment-link/context.ts';
import { HOLD_TTL_MS } from '../../machines/link-hold/events.ts';
import { parseDecimalAmount } from '../../machines/money/money.ts';
import type { PublicLink } from '../../runtime/commerce/links.ts';
import { randomId } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { intentCreateEvent, prepareCreate } from '../payment-intents/create-event.ts';
import { LINK_KIND } from './link-commands.ts';

export type PayOutcome = { kind: 'checkout'; intentId: string } | { kind: 'sold_out' } | { kind: 'inactive' };

/** The amount the buyer pays: the link's price, or the buyer's within the link's range. */
function chargeAmount(c: PaymentLinkContext, chosen: unknown): string {
  if (c.price.kind === 'fixed') return c.price.amount;
  const decimals = c.price.currency === 'ANM' ? 9 : 2;
  const v = typeof chosen === 'string' ? chosen.trim() : '';
  const units = parseDecimalAmount(v, decimals);
  if (units === null || units < parseDecimalAmount(c.price.min_amount, decimals)! || units > parseDecimalAmount(c.price.max_amount, decimals)!) {
    throw new AppError('invalid_amount', `Choose an amount from ${c.price.min_amount} to ${c.price.max_amount} ${c.price.currency}.`);
  }
  return v;
}

export async function payLink(d: GatewayDeps, link: PublicLink, chosen: unknown): Promise<PayOutcome> {
  const c = link.snapshot.context as PaymentLinkContext;
  if (link.state !== 'ACTIVE' || link.merchant_status !== 'active') return { kind: 'inactive' };
  const prepared = await prepareCreate(d, { amount: chargeAmount(c, chosen), currency: c.price.currency, description: [...c.title].slice(0, 500).join('') });
  const input = prepared.input;
  if (!link.payout_address) throw new AppError('payout_address_required', 'This merchant cannot take payments in this mode yet.');
  const now = (d.now ?? Date.now)();
  const intentId = randomId('pay_');
  let holdId: string | null = null;
  if (c.units_total !== null) {
    holdId = randomId('hold_');
    const take = { type: 'link.hold.take', id: `take:${holdId}`, at: now, hold_id: holdId, intent_id: intentId, expires_at: now + HOLD_TTL_MS };
    // Every press of a link writes its one row: queued per link in this process, so takes run
    // on the row this process wrote last (the engine's optimistic path) instead of racing for
    // its lock, and those that wait for a take in flight are written together (ADR 0053).
    const target = { kind: LINK_KIND, id: link.id, merchant: link.merchant, mode: link.mode };
    const r = await (d.host.applyInOrder ? d.host.applyInOrder(target, take) : d.host.apply(target, take));
    if (r.outcome !== 'applied') return r.status === 'ACTIVE' ? { kind: 'sold_out' } : { kind: 'inactive' };
  }
  input.metadata = { ...c.metadata, payment_link: link.id, ...(holdId ? { hold: holdId } : {}) };
  if (c.success_url) input.success_url = c.success_url;
  const owner = { merchant: link.merchant, mode: link.mode, payoutAddress: link.payout_address, successUrl: link.success_url, cancelUrl: link.cancel_url };
  const event = intentCreateEvent(d, intentId, owner, prepared, now);
  // Should this fail, the hold still ends: its 30-minute timer returns the unit.
  await d.host.apply({ kind: 'payment_intent', id: intentId, merchant: link.merchant, mode: link.mode }, event);
  return { kind: 'checkout', intentId };
}
