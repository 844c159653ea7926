import type { LinkPrice, PaymentLinkCreateEvent } from './events.ts';

/** How many oversold holds the link names (the dashboard's flags); the count itself is exact. */
export const OVERSOLD_NAMED = 50;

export interface PaymentLinkContext {
  link_id: string;
  merchant_id: string;
  mode: 'live' | 'test';
  slug: string;
  code: string;
  title: string;
  description: string | null;
  price: LinkPrice;
  /** Null: unlimited, and no holds are taken. */
  units_total: number | null;
  units_held: number;
  units_sold: number;
  /** Late payments on released holds that found no unit left: the merchant refunds them. */
  units_oversold: number;
  oversold_holds: string[];
  success_url: string | null;
  metadata: Record<string, unknown>;
  created_at: number;
  deactivated_at: number | null;
}

export function initialLinkContext(e: PaymentLinkCreateEvent): PaymentLinkContext {
  return {
    link_id: e.link_id,
    merchant_id: e.merchant_id,
    mode: e.mode,
    slug: e.slug,
    code: e.code,
    title: e.title,
    description: e.description,
    price: e.price,
    units_total: e.units_total,
    units_held: 0,
    units_sold: 0,
    units_oversold: 0,
    oversold_holds: [],
    success_url: e.success_url,
    metadata: e.metadata,
    created_at: e.at,
    deactivated_at: null,
  };
}
