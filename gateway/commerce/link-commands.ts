/**
 * Payment-link commands shared by the merchant API and the dashboard: create (the slug and a
 * fresh short code claimed in the create's own statement), deactivate, and the JSON object.
 * Each is an event to the link actor; nothing else writes.
 */
import type { PaymentLinkContext } from '../../machines/payment-link/context.ts';
import type { PaymentLinkCreateEvent } from '../../machines/payment-link/events.ts';
import { paymentLinkResource, type PaymentLinkResource } from '../../machines/payment-link/view.ts';
import { takenIndex } from '../../runtime/commerce/link-index.ts';
import type { LinkRow } from '../../runtime/commerce/links.ts';
import { randomId, type Mode } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { LinkInput } from './link-input.ts';

export const LINK_KIND = 'payment_link';
export const LINK_ID = /^plink_[a-z2-7]{24}$/;

export function linkCommands(d: GatewayDeps) {
  const now = d.now ?? Date.now;
  const links = () => {
    if (!d.commerce) throw new AppError('not_found');
    return d.commerce.links;
  };
  const render = (row: Pick<LinkRow, 'snapshot' | 'state' | 'handle'>): PaymentLinkResource =>
    paymentLinkResource(row.snapshot.context as PaymentLinkContext, row.state, { baseUrl: d.baseUrl(), handle: row.handle });

  return {
    render,

    async create(merchant: string, mode: Mode, handle: string, input: LinkInput): Promise<PaymentLinkResource> {
      if (input.price.currency !== 'ANM' && !(await d.rates.quote(input.price.currency))) throw new AppError('currency_unsupported');
      const linkId = randomId('plink_');
      // Eight base32 characters (40 bits): a collision is rare, and costs one more try.
      for (let attempt = 0; ; attempt++) {
        const event: PaymentLinkCreateEvent = { type: 'link.create', id: `${linkId}:create:${attempt}`, at: now(), link_id: linkId, merchant_id: merchant, mode, code: randomId('', 5), ...input };
        try {
          const r = await d.host.apply({ kind: LINK_KIND, id: linkId, merchant, mode }, event);
          return render({ snapshot: r.snapshot, state: r.status, handle });
        } catch (err) {
          const taken = takenIndex(err);
          if (taken === 'slug') throw new AppError('slug_taken');
          if (taken !== 'code' || attempt >= 4) throw err;
        }
      }
    },

    async own(merchant: string, mode: Mode, id: string) {
      const row = LINK_ID.test(id) ? await links().own(merchant, mode, id) : null;
      // Another merchant's (or mode's) link reads as absent: 404, never 403 (spec rule 11).
      if (!row) throw new AppError('not_found', 'No such payment link.');
      return row;
    },

    async deactivate(merchant: string, mode: Mode, id: string): Promise<PaymentLinkResource> {
      const row = await this.own(merchant, mode, id);
      // Deactivating an inactive link changes nothing and answers the link as it is.
      const r = await d.host.apply({ kind: LINK_KIND, id, merchant, mode }, { type: 'link.deactivate', id: `${id}:deactivate`, at: now() });
      return render({ snapshot: r.snapshot, state: r.status, handle: row.handle });
    },
  };
}
