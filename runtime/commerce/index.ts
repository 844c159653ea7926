/**
 * The commerce side of the runtime (DESIGN §7, issue 23): payment links and their unit holds.
 * The gateway reads links through `links`; runtime processes run the hold follower.
 */
import type { Db } from '../../storage/db.ts';
import { LinkReads } from './links.ts';

export interface CommerceServices {
  links: LinkReads;
  /** Buyers' presses of Pay per link and IP per minute (DESIGN §7: 10). */
  payPerIpPerMinute: number;
}

export function openCommerceServices(db: Db, opts: { payPerIpPerMinute?: number } = {}): CommerceServices {
  return { links: new LinkReads(db), payPerIpPerMinute: opts.payPerIpPerMinute ?? 10 };
}

export { startHoldFollower } from './hold-follower.ts';
