/**
 * The merchant side of the runtime, opened once per process: key pepper, operator token,
 * treasury, the demo merchant on an empty store, and the repositories the gateway reads.
 */
import type { Db } from '../../storage/db.ts';
import type { Config } from '../config.ts';
import { loadOperatorToken } from '../operator-token.ts';
import { rateSourceFromConfig, type RateSource } from '../rates/rate-source.ts';
import { ensureDemoMerchant, ensureTreasury, type Treasury } from './bootstrap.ts';
import { CheckoutReads } from './checkout-reads.ts';
import { Gate, IdempotencyRecords, type GateLimits } from './gate.ts';
import { IntentReads } from './intent-reads.ts';
import { Merchants, type CreatedMerchant } from './merchants.ts';
import { RateBuckets } from './rate-buckets.ts';
import { RefundReads } from './refund-reads.ts';
import { Invoices } from '../commerce/invoices.ts';
import { loadPepper } from './secrets.ts';

export interface MerchantServices {
  gate: Gate;
  idempotency: IdempotencyRecords;
  /** The sweep of stale rate-limit buckets. */
  rateBuckets: RateBuckets;
  intents: IntentReads;
  /** The hosted checkout's one-round-trip read (intent + merchant name and origins). */
  checkout: CheckoutReads;
  merchants: Merchants;
  /** The refund routes' reads (own intents and refunds). */
  refunds: RefundReads;
  /** Invoice reads and numbering (the invoice itself is an actor). */
  invoices: Invoices;
  rates: RateSource;
  treasury: Treasury;
  pepper: Buffer;
  operatorToken: string;
  /** The demo merchant, when this start created it (print it once). */
  demo: CreatedMerchant | null;
}

type MerchantConfig = Pick<
  Config,
  | 'ANMPAY_DATA_DIR'
  | 'ANMPAY_KEY_PEPPER'
  | 'ANMPAY_OPERATOR_TOKEN'
  | 'ANM_RATES'
  | 'RATE_SOURCE_URL'
  | 'RATE_LIMIT_KEY_PER_MIN'
  | 'RATE_LIMIT_KEY_BURST'
  | 'RATE_LIMIT_IP_PER_MIN'
  | 'RATE_LIMIT_IP_BURST'
>;

export function gateLimits(c: Pick<MerchantConfig, 'RATE_LIMIT_KEY_PER_MIN' | 'RATE_LIMIT_KEY_BURST' | 'RATE_LIMIT_IP_PER_MIN' | 'RATE_LIMIT_IP_BURST'>): GateLimits {
  return {
    key: { capacity: c.RATE_LIMIT_KEY_BURST, perMinute: c.RATE_LIMIT_KEY_PER_MIN },
    ip: { capacity: c.RATE_LIMIT_IP_BURST, perMinute: c.RATE_LIMIT_IP_PER_MIN },
    takeoverAfterMs: 60_000,
  };
}

export async function openMerchantServices(db: Db, config: MerchantConfig, opts: { demo?: boolean } = {}): Promise<MerchantServices> {
  const pepper = await loadPepper(config.ANMPAY_DATA_DIR, config.ANMPAY_KEY_PEPPER);
  const merchants = new Merchants(db, pepper);
  return {
    gate: new Gate(db, gateLimits(config)),
    idempotency: new IdempotencyRecords(db),
    rateBuckets: new RateBuckets(db),
    intents: new IntentReads(db),
    checkout: new CheckoutReads(db),
    merchants,
    refunds: new RefundReads(db),
    invoices: new Invoices(db),
    rates: rateSourceFromConfig(config),
    treasury: await ensureTreasury(db),
    pepper,
    operatorToken: await loadOperatorToken(config.ANMPAY_DATA_DIR, config.ANMPAY_OPERATOR_TOKEN),
    demo: opts.demo === false ? null : await ensureDemoMerchant(db, merchants),
  };
}
