import { describe, expect, it } from 'vitest';
import { create, replay, step } from '../kit/step.ts';
import type { ListingContext } from './context.ts';
import { listingDefinition } from './definition.ts';
import { listingRecord } from './view.ts';

const T = 1_800_000_000_000;
const fields = {
  resource_id: 'res_ab12',
  provider_id: 'prov_cd34',
  name: 'Weather',
  description: 'Forecasts',
  category: 'data',
  tags: ['weather'],
  endpoint: 'https://seller.example/weather',
  method: 'GET',
  model: 'per_call',
  assets: [{ asset: 'USDC', pay_to: '0x1111111111111111111111111111111111111111', seller_price_atomic: '10000' }],
  documentation_url: null,
  request_schema: null,
  response_schema: null,
  example_request: null,
  example_response: null,
} as const;
const register = { type: 'listing.register', id: 'r1', at: T, ...fields } as const;
const parse = (e: unknown) => listingDefinition.events.parse(e);

describe('listing machine (marketplace.md "Listing", DESIGN §5 "Listings")', () => {
  it('a new listing is unverified and renders every field of the record', () => {
    const r = create(listingDefinition, parse(register));
    expect(r.status).toBe('unverified');
    const rec = listingRecord(r.snapshot.context as ListingContext, 'unverified');
    expect(rec.status).toBe('unverified');
    expect(rec.created_at).toBe(T / 1000);
    expect(rec.pricing).toEqual({
      model: 'per_call', asset: 'USDC', network: 'eip155:8453',
      seller_price: '0.010000', seller_price_atomic: '10000',
      marketplace_fee: '0.000050', marketplace_fee_atomic: '50',
      total_price: '0.010050', total_price_atomic: '10050', fee_bps: 50,
    });
    expect(rec.analytics).toEqual({ transactions: 0 });
    expect(rec.score_label).toBe('insufficient_data');
  });

  it('the same provider updates; another provider is ignored', () => {
    const r = create(listingDefinition, parse(register));
    const upd = step(listingDefinition, r.snapshot, parse({ ...register, type: 'listing.update', id: 'u1', name: 'Weather 2' }));
    expect((upd.snapshot.context as ListingContext).name).toBe('Weather 2');
    const other = step(listingDefinition, upd.snapshot, parse({ ...register, type: 'listing.update', id: 'u2', provider_id: 'prov_ee', name: 'Hijack' }));
    expect(other.accepted).toBe(false);
    expect((other.snapshot.context as ListingContext).name).toBe('Weather 2');
  });

  it('a settled purchase counts once, however often it is delivered; replay equals the snapshot', () => {
    const events = [register, ...[1, 2, 3].map((i) => ({ type: 'listing.purchase_settled', id: `s${i}`, at: T + i, intent_id: i === 3 ? 'pi_1' : `pi_${i}` }))].map(parse);
    let snap = create(listingDefinition, events[0]!).snapshot;
    for (const e of events.slice(1)) snap = step(listingDefinition, snap, e).snapshot;
    expect((snap.context as ListingContext).transactions).toBe(2);
    expect(replay(listingDefinition, events)).toEqual(snap);
  });

  it('a listing without a probe timer (one from before the scanner) gets its rounds back: listing.resume_probes schedules the first one after its jitter', () => {
    const r = create(listingDefinition, parse(register));
    // A snapshot written before the scanner had no scan state.
    const old = { ...r.snapshot, context: { ...(r.snapshot.context as ListingContext), scan: undefined } };
    const resumed = step(listingDefinition, JSON.parse(JSON.stringify(old)) as typeof old, parse({ type: 'listing.resume_probes', id: 'resume-probes:1', at: T + 5, probe_in_ms: 1234 }));
    expect(resumed.accepted).toBe(true);
    expect(resumed.status).toBe('unverified');
    expect(resumed.effects).toEqual([{ type: 'scheduleTimer', params: { name: 'probe', at: T + 5 + 1234, event: 'listing.probe_due' } }]);
  });
});
