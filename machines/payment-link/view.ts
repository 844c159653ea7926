import type { PaymentLinkContext } from './context.ts';
import { unitsLeft } from './rules.ts';

export type PaymentLinkStatus = 'ACTIVE' | 'INACTIVE';

/** The `payment_link` JSON object (DESIGN §7 names), with its URLs under `baseUrl`. */
export function paymentLinkResource(c: PaymentLinkContext, status: string, opts: { baseUrl: string; handle: string }) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const price = c.price.kind === 'fixed' ? { amount: c.price.amount, currency: c.price.currency } : { min_amount: c.price.min_amount, max_amount: c.price.max_amount, currency: c.price.currency };
  const limited = c.units_total !== null;
  return {
    id: c.link_id,
    object: 'payment_link' as const,
    mode: c.mode,
    slug: c.slug,
    code: c.code,
    title: c.title,
    description: c.description,
    ...price,
    units_total: c.units_total,
    // Unlimited links take no holds (DESIGN §7), so they have nothing to count.
    units_held: limited ? c.units_held : null,
    units_sold: limited ? c.units_sold : null,
    units_left: unitsLeft(c),
    units_oversold: c.units_oversold,
    oversold_holds: c.oversold_holds,
    active: status === 'ACTIVE',
    success_url: c.success_url,
    metadata: c.metadata,
    url: `${base}/p/${opts.handle}/${c.slug}`,
    short_url: `${base}/l/${c.code}`,
    created_at: new Date(c.created_at).toISOString(),
  };
}

export type PaymentLinkResource = ReturnType<typeof paymentLinkResource>;
