/**
 * Units of limited products in a till's cart (DESIGN §7, ADR 0048): one hold per unit, taken
 * from the link actor with the same `link.hold.take` its Pay page sends, so the link stays the
 * one counter and two processes never sell its last unit twice. The holds name the sale's
 * intent and follow it (the hold follower reads `metadata.holds`); a unit that is gone refuses
 * the whole sale with `409 sold_out`, and the units already taken for it are handed back.
 *
 * Hold ids are derived from the sale, so a second tap (or a retry) of the same sale finds its
 * own holds (the link's dedupe) instead of taking more units.
 */
import { HOLD_TTL_MS } from '../../machines/link-hold/events.ts';
import { keyedId, type Mode } from '../../runtime/merchant/secrets.ts';
import { LINK_KIND } from '../commerce/link-commands.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { HeldLine } from './cart.ts';

export interface Sale {
  merchant: string;
  mode: Mode;
  saleId: string;
  intentId: string;
  at: number;
}

/** The holds of the sale's limited units, taken in cart order; throws `sold_out` (after handing back) when one is gone. */
export async function takeHolds(d: Pick<GatewayDeps, 'host' | 'pepper'>, sale: Sale, lines: readonly HeldLine[]): Promise<string[]> {
  const holds: string[] = [];
  for (const line of lines) {
    const target = { kind: LINK_KIND, id: line.link, merchant: sale.merchant, mode: sale.mode };
    for (let n = 0; n < line.quantity; n++) {
      const holdId = keyedId('hold_', d.pepper, ['pos', sale.merchant, sale.mode, sale.saleId, line.link, String(n)]);
      const take = { type: 'link.hold.take', id: `take:${holdId}`, at: sale.at, hold_id: holdId, intent_id: sale.intentId, expires_at: sale.at + HOLD_TTL_MS };
      // Queued per link in this process, as the Pay page's takes are.
      const r = await (d.host.applyInOrder ? d.host.applyInOrder(target, take) : d.host.apply(target, take));
      // A duplicate is this sale's own earlier take (a retry): the unit is already ours.
      if (r.outcome === 'applied' || r.outcome === 'duplicate') {
        holds.push(holdId);
        continue;
      }
      await handBack(d, holds, sale.at);
      const left = n === 0 ? 'none is left' : `only ${n} ${n === 1 ? 'is' : 'are'} left`;
      throw new AppError('sold_out', r.status === 'ACTIVE' ? `${line.title}: ${left} (sold or held for other buyers).` : `${line.title} is no longer sold.`);
    }
  }
  return holds;
}

/**
 * Ends holds whose sale was refused, as if their intent had been canceled: each returns its
 * unit to the link. Sent through the bus, because a hold is created from its link's outbox and
 * may not exist yet; without a bus the hold's own 30-minute timer returns the unit.
 */
async function handBack(d: Pick<GatewayDeps, 'host'>, holds: readonly string[], at: number): Promise<void> {
  const host = d.host;
  if (!host.send) return;
  await Promise.all(holds.map((id) => host.send!({ kind: 'link_hold', id }, { type: 'intent.ended', id: `pos.refused:${id}`, at, reason: 'canceled' })));
}
