/**
 * The listing keeps the seller's own offer its probes read (ADR 0091): per lane, payTo and
 * token as the seller spells them, maxTimeoutSeconds and `extra` — what a stock seller
 * compares a payment's `accepted` against (DESIGN §5 "Purchase": the seller leg is "a valid
 * ordinary x402 `exact` payment to the seller's own `payTo`").
 */
import { describe, expect, it } from 'vitest';
import { create, restore, step, type PersistedSnapshot } from '../kit/step.ts';
import type { ListingContext } from './context.ts';
import { listingDefinition } from './definition.ts';
import type { ListingEvent } from './events.ts';
import { listingRecord, type ListingStatus } from './view.ts';
import verified from '../../test/fixtures/snapshots/listing/1/verified.json' with { type: 'json' };

const T = 1_800_000_000_000;
const PAY_TO = '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd';
const SPELLED = '0xABcdEFABcdEFabcdEfAbCdefabcdeFabcDEFabCD';
const fields = {
  resource_id: 'res_ab12', provider_id: 'prov_cd34', name: 'Weather', description: 'Forecasts', category: 'data', tags: ['weather'],
  endpoint: 'https://seller.example/weather', method: 'GET', model: 'per_call',
  assets: [{ asset: 'USDC', pay_to: PAY_TO, seller_price_atomic: '10000' }],
  documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
};
const parse = (e: unknown): ListingEvent => listingDefinition.events.parse(e);
const offer = (timeout: number, extra?: Record<string, unknown>) => ({ asset: 'USDC', pay_to: SPELLED, asset_id: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', max_timeout_seconds: timeout, ...(extra && { extra }) });
let n = 0;
const probed = (offers?: unknown[]) =>
  parse({ type: 'listing.probed', id: `p${++n}`, at: T + n * 1000, outcome: 'ok', http_status: 402, latency_ms: 10, detail: '', next_probe_in_ms: 600_000, ...(offers && { seller_offers: offers }) });

function run(events: ListingEvent[], from: PersistedSnapshot = create(listingDefinition, parse({ type: 'listing.register', id: 'r', at: T, ...fields })).snapshot) {
  let snap = from;
  for (const e of events) snap = step(listingDefinition, snap, e).snapshot;
  return listingRecord(snap.context as ListingContext, snap.value as ListingStatus).accepted_assets[0]!.seller_offer;
}

describe('the seller\'s own offer, as its probes read it (ADR 0091)', () => {
  it('is null before a probe read one, then the newest read, as the seller spells it', () => {
    expect(run([])).toBeNull();
    expect(run([probed([offer(60, { name: 'USD Coin', version: '2' })])])).toEqual({ pay_to: SPELLED, asset_id: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', max_timeout_seconds: 60, extra: { name: 'USD Coin', version: '2' } });
    expect(run([probed([offer(60)]), probed([offer(120)])])?.max_timeout_seconds).toBe(120);
  });

  it('a probe that read none (down, or no lane matched) keeps the last one', () => {
    const down = parse({ type: 'listing.probed', id: 'down', at: T + 99_000, outcome: 'timeout', http_status: null, latency_ms: null, detail: 'no answer', next_probe_in_ms: 600_000 });
    expect(run([probed([offer(60)]), down])?.max_timeout_seconds).toBe(60);
  });

  it('is not shown once an update names another payee: it was read for the old one', () => {
    const update = parse({ type: 'listing.update', id: 'u', at: T + 50_000, ...fields, assets: [{ asset: 'USDC', pay_to: `0x${'22'.repeat(20)}`, seller_price_atomic: '10000' }] });
    expect(run([probed([offer(60)]), update])).toBeNull();
    const repriced = parse({ type: 'listing.update', id: 'u2', at: T + 50_000, ...fields, assets: [{ asset: 'USDC', pay_to: PAY_TO, seller_price_atomic: '20000' }] });
    expect(run([probed([offer(60)]), repriced])?.max_timeout_seconds).toBe(60);
  });

  it('refuses an offer the SDK could not have sent: no timeout, a fractional one, or an extra of more than 2 KiB', () => {
    expect(() => probed([{ ...offer(60), max_timeout_seconds: 0 }])).toThrow();
    expect(() => probed([{ ...offer(60), max_timeout_seconds: 1.5 }])).toThrow();
    expect(() => probed([offer(60, { pad: 'x'.repeat(2100) })])).toThrow();
  });

  it('a snapshot written before it (golden, version 1) restores with none and records one', () => {
    const snap = structuredClone(verified) as PersistedSnapshot;
    expect(String(restore(listingDefinition, snap).value)).toBe('verified');
    const ctx = snap.context as ListingContext;
    const read = { ...offer(60), pay_to: ctx.assets[0]!.pay_to.toUpperCase().replace('0X', '0x') };
    expect(run([], snap)).toBeNull();
    expect(run([parse({ ...probed([read]), provider_id: ctx.provider_id })], snap)?.max_timeout_seconds).toBe(60);
  });
});
