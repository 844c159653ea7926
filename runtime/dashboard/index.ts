/**
 * The dashboard's side of the runtime (DESIGN §7), opened once per gateway process: sessions,
 * the login lockout, merchant logins, the page reads and the point of sale's sales.
 */
import type { Db } from '../../storage/db.ts';
import { PosSales } from '../commerce/pos-sales.ts';
import { ShopReads } from '../commerce/shop.ts';
import { Accounts } from '../merchant/accounts.ts';
import { PayoutAddresses } from '../merchant/payout.ts';
import { LoginLimits } from '../sessions/login-limits.ts';
import { SessionStore } from '../sessions/store.ts';
import { DashboardReads } from './reads.ts';

export interface DashboardServices {
  sessions: SessionStore;
  limits: LoginLimits;
  accounts: Accounts;
  reads: DashboardReads;
  payout: PayoutAddresses;
  /** The point of sale's sales of the day. */
  pos: PosSales;
  /** The shop directory, storefronts and each merchant's opt-in. */
  shop: ShopReads;
  /** ANMPAY_SHOP_DIRECTORY=1: `/shop` lists the merchants that opted in. */
  shopDirectory: boolean;
  /** ANMPAY_OPEN_SIGNUP=1: anyone may create a merchant at /dashboard/signup. */
  openSignup: boolean;
}

export function openDashboardServices(db: Db, opts: { openSignup?: boolean; shopDirectory?: boolean } = {}): DashboardServices {
  return {
    sessions: new SessionStore(db),
    limits: new LoginLimits(db),
    accounts: new Accounts(db),
    reads: new DashboardReads(db),
    payout: new PayoutAddresses(db),
    pos: new PosSales(db),
    shop: new ShopReads(db),
    shopDirectory: opts.shopDirectory === true,
    openSignup: opts.openSignup === true,
  };
}
