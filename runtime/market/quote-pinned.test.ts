/** Whether a listing named by `resource_id` may be quoted under the ceilings (quote-pinned.ts, ADR 0085). */
import { describe, expect, it } from 'vitest';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { pinnedRefusal } from './quote-pinned.ts';

const record = (latency: number | null, outcome = 'ok', status = 'verified') =>
  ({
    resource_id: 'res_1',
    status,
    latency_p50_ms: latency,
    recent_scans: [{ outcome }],
    accepted_assets: [{ asset: 'USDC', total_price: '0.020100', total_price_atomic: '20100' }],
  }) as ListingRecord;

describe('pinnedRefusal', () => {
  it('passes a callable listing under the ceilings; no latency data passes any latency ceiling', () => {
    expect(pinnedRefusal(record(40), { asset: 'USDC', maxPrice: '0.0201', maxLatencyMs: 40 })).toBeUndefined();
    expect(pinnedRefusal(record(null), { asset: 'USDC', maxLatencyMs: 1 })).toBeUndefined();
  });

  it.each<[string, ListingRecord, Parameters<typeof pinnedRefusal>[1], string]>([
    ['over max_price', record(40), { asset: 'USDC', maxPrice: '0.020099' }, 'its total 0.020100 USDC is over max_price 0.020099'],
    ['under one USDC unit', record(40), { asset: 'USDC', maxPrice: '0.0000001' }, 'over max_price'],
    ['another asset', record(40), { asset: 'ANM' }, 'does not accept ANM'],
    ['slower than the ceiling', record(41), { asset: 'USDC', maxLatencyMs: 40 }, 'p50 latency 41 ms is over max_latency_ms 40'],
    ['offline', record(null, 'timeout', 'offline'), { asset: 'USDC' }, 'offline'],
    ['refused by the SSRF rules', record(null, 'refused', 'degraded'), { asset: 'USDC' }, 'SSRF'],
    ['paying someone else', record(40, 'pay_to_mismatch'), { asset: 'USDC' }, 'pay_to_mismatch'],
  ])('refuses a listing %s, naming why', (_, r, q, why) => {
    expect(pinnedRefusal(r, q)).toMatch(new RegExp(`^Listing res_1 is not quoted: .*${why.replace(/[.]/g, '\\.')}`));
  });
});
