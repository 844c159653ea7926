/**
 * A probe counts for the terms it checked (ADR 0088): one in flight while the owner updates the
 * listing's endpoint, method, payee or price is not recorded, so a 402 matching the old terms
 * never marks the new ones `verified`. An update that leaves those terms as they were (a new
 * name) keeps the probe. Probes from before the digest are read as made against the current terms.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, step, type PersistedSnapshot } from '../kit/step.ts';
import { termsDigest, type ListingContext } from './context.ts';
import { listingDefinition } from './definition.ts';
import type { ListingEvent } from './events.ts';
import { listingRecord, type ListingStatus } from './view.ts';

const T = 1_800_000_000_000;
const PAY_TO = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'] as const;
type Terms = { pay_to: 0 | 1; price: '10000' | '20000'; endpoint: 'a' | 'b'; name: string };
const fields = (t: Terms) => ({
  resource_id: 'res_ab12', provider_id: 'prov_cd34', name: t.name, description: '', category: 'data', tags: [],
  endpoint: `https://seller.example/${t.endpoint}`, method: 'GET', model: 'per_call',
  assets: [{ asset: 'USDC', pay_to: PAY_TO[t.pay_to], seller_price_atomic: t.price }],
  documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
});
const digestOf = (t: Terms) => termsDigest(fields(t) as unknown as ListingContext);
const parse = (e: unknown): ListingEvent => listingDefinition.events.parse(e);
const FIRST: Terms = { pay_to: 0, price: '10000', endpoint: 'a', name: 'Weather' };
const register = parse({ type: 'listing.register', id: 'r1', at: T, ...fields(FIRST) });
const update = (i: number, t: Terms) => parse({ type: 'listing.update', id: `u${i}`, at: T + i, ...fields(t) });
/** A conformant 402 (or a mismatch) as judged against the terms `read`; `read` undefined: a probe from before the digest. */
const probe = (i: number, read: Terms | undefined, ok = true) =>
  parse({
    type: 'listing.probed', id: `p${i}`, at: T + i, outcome: ok ? 'ok' : 'mismatch', http_status: 402, latency_ms: 20, detail: '', next_probe_in_ms: 600_000,
    provider_id: 'prov_cd34', owner_generation: 0, ...(read && { terms_digest: digestOf(read) }),
  });

function run(events: ListingEvent[]) {
  let snap: PersistedSnapshot = create(listingDefinition, register).snapshot;
  const accepted: boolean[] = [];
  for (const e of events) {
    const r = step(listingDefinition, snap, e);
    accepted.push(r.accepted);
    snap = r.snapshot;
  }
  return { snap, accepted, rec: listingRecord(snap.context as ListingContext, snap.value as ListingStatus) };
}

describe('probes and the terms they checked (ADR 0088)', () => {
  const NEW_PAY_TO: Terms = { ...FIRST, pay_to: 1 };

  it('a probe read before an update of the payee does not verify the new terms; one read after does', () => {
    const verified = run([probe(1, FIRST)]);
    expect(verified.rec.status).toBe('verified');
    const stale = run([probe(1, FIRST), update(2, NEW_PAY_TO), probe(3, FIRST)]);
    expect(stale.accepted).toEqual([true, true, false]);
    expect(stale.rec).toMatchObject({ status: 'unverified', uptime_observations: 1 });
    expect(run([probe(1, FIRST), update(2, NEW_PAY_TO), probe(3, FIRST), probe(4, NEW_PAY_TO)]).rec).toMatchObject({ status: 'verified', uptime_observations: 2 });
  });

  it('the same for a new price or endpoint; a probe that checked the old terms is not counted at all', () => {
    for (const t of [{ ...FIRST, price: '20000' }, { ...FIRST, endpoint: 'b' }] as Terms[]) {
      expect(run([update(1, t), probe(2, FIRST)]).rec).toMatchObject({ status: 'unverified', uptime_observations: 0 });
    }
  });

  it('an update that leaves the checked terms as they were keeps a probe in flight; so do terms changed and changed back', () => {
    expect(run([update(1, { ...FIRST, name: 'Weather 2' }), probe(2, FIRST)]).rec.status).toBe('verified');
    expect(run([update(1, NEW_PAY_TO), update(2, { ...FIRST, name: 'Back' }), probe(3, FIRST)]).rec.status).toBe('verified');
  });

  it('a probe from before the digest is read as made against the current terms', () => {
    expect(run([update(1, NEW_PAY_TO), probe(2, undefined)]).rec.status).toBe('verified');
  });

  it('model: verified exactly when a conformant probe of the current terms came after the last update', () => {
    const terms = fc.record({ pay_to: fc.constantFrom<0 | 1>(0, 1), price: fc.constantFrom<'10000' | '20000'>('10000', '20000'), endpoint: fc.constantFrom<'a' | 'b'>('a', 'b'), name: fc.constantFrom('W', 'X') });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('update' as const), terms }),
      // A probe that read the terms as they were `back` updates ago (0: the current ones), or a legacy one.
      fc.record({ kind: fc.constant('probe' as const), back: fc.integer({ min: 0, max: 2 }), legacy: fc.boolean(), ok: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const history: Terms[] = [FIRST];
        let verified = false;
        let counted = 0;
        const events = ops.map((o, i): ListingEvent => {
          const current = history.at(-1)!;
          if (o.kind === 'update') {
            history.push(o.terms);
            verified = false;
            return update(i + 1, o.terms);
          }
          const read = history[Math.max(0, history.length - 1 - o.back)]!;
          if (o.legacy || digestOf(read) === digestOf(current)) {
            counted++;
            verified ||= o.ok;
          }
          return probe(i + 1, o.legacy ? undefined : read, o.ok);
        });
        const { snap, rec } = run(events);
        expect(rec.uptime_observations).toBe(counted);
        // Every probe answered, so never offline: `unverified` exactly while nothing conformed since the last change.
        expect(rec.status === 'unverified').toBe(!verified);
        expect(replay(listingDefinition, [register, ...events])).toEqual(snap);
      }),
      { numRuns: 300 },
    );
  });
});
