import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, step, type PersistedSnapshot } from '../kit/step.ts';
import type { ListingContext } from './context.ts';
import { listingDefinition } from './definition.ts';
import type { ListingEvent, ProbeOutcome } from './events.ts';
import { listingRecord, type ListingStatus } from './view.ts';

/**
 * The listing takeover (ADR 0072; docs/marketplace.md "POST /api/v1/resources"): another key
 * takes a listing over when the proof in its event shows the endpoint's 402 naming the new
 * payTo on every lane, and only against the ownership the proof was made for. The machine
 * decides on the event alone (DESIGN §2: pure machines), so a journal replays to its snapshot.
 */
const T = 1_800_000_000_000;
const KEYS = ['prov_a1', 'prov_b2', 'prov_c3'] as const;
type Key = (typeof KEYS)[number];
const payTo = (k: Key) => `0x${k.slice(-2).repeat(20)}`;
const anmPayTo = (k: Key) => `anm1${k.slice(-2)}`;

const fields = (k: Key, withAnm = false) => ({
  resource_id: 'res_ab12',
  provider_id: k,
  name: `Weather by ${k}`,
  description: 'Forecasts',
  category: 'data',
  tags: ['weather'],
  endpoint: 'https://seller.example/weather',
  method: 'GET',
  model: 'per_call' as const,
  assets: [
    { asset: 'USDC' as const, pay_to: payTo(k), seller_price_atomic: '10000' },
    ...(withAnm ? [{ asset: 'ANM' as const, pay_to: anmPayTo(k), seller_price_atomic: '500000000' }] : []),
  ],
  documentation_url: null,
  request_schema: null,
  response_schema: null,
  example_request: null,
  example_response: null,
});
const parse = (e: unknown): ListingEvent => listingDefinition.events.parse(e);
const register = parse({ type: 'listing.register', id: 'r1', at: T, ...fields('prov_a1') });

interface TakeOver {
  by: Key;
  at: number;
  /** The ownership the proof was made against; without `gen` the event is one from before ADR 0077. */
  prev: { provider: string; since: number; gen?: number };
  /** Payees the proof shows on each lane; USDC only unless `anm` is set. */
  usdc: string[];
  anm?: string[];
  outcome?: ProbeOutcome;
}
const takeOver = (t: TakeOver, id = `t${t.at}`) =>
  parse({
    type: 'listing.take_over', id, at: t.at, ...fields(t.by, t.anm !== undefined),
    previous_provider_id: t.prev.provider, previous_owner_since: t.prev.since, previous_owner_generation: t.prev.gen,
    proof: {
      probed_at: t.at - 5, outcome: t.outcome ?? 'ok', http_status: 402, latency_ms: 12, detail: '',
      payees: [{ asset: 'USDC', pay_to: t.usdc }, ...(t.anm ? [{ asset: 'ANM', pay_to: t.anm }] : [])],
    },
  });
const ctxOf = (s: PersistedSnapshot) => s.context as ListingContext;
/** A scanner probe judged against `k`'s terms, read at ownership `gen` (absent: a probe from before ADR 0077). */
const probeBy = (k: Key, at: number, outcome: ProbeOutcome, gen?: number, id = `p${at}`) =>
  parse({ type: 'listing.probed', id, at, outcome, http_status: 402, latency_ms: 10, detail: '', next_probe_in_ms: 600_000, provider_id: k, owner_generation: gen });

describe('listing takeover (ADR 0072)', () => {
  const a0 = { provider: 'prov_a1', since: T };

  it.each([
    { name: 'proof names the new payTo (any case): taken over', t: { by: 'prov_b2', at: T + 10, prev: a0, usdc: [payTo('prov_a1'), payTo('prov_b2').toUpperCase().replace('0X', '0x')] }, ok: true },
    { name: 'proof names only the old payTo', t: { by: 'prov_b2', at: T + 10, prev: a0, usdc: [payTo('prov_a1')] }, ok: false },
    { name: 'the endpoint did not answer a 402 (no payees)', t: { by: 'prov_b2', at: T + 10, prev: a0, usdc: [], outcome: 'timeout' }, ok: false },
    { name: 'a second lane listed but not named', t: { by: 'prov_b2', at: T + 10, prev: a0, usdc: [payTo('prov_b2')], anm: ['anm1zz'] }, ok: false },
    { name: 'both lanes named', t: { by: 'prov_b2', at: T + 10, prev: a0, usdc: [payTo('prov_b2')], anm: [anmPayTo('prov_b2')] }, ok: true },
    { name: 'proof made against another owner', t: { by: 'prov_b2', at: T + 10, prev: { provider: 'prov_c3', since: T }, usdc: [payTo('prov_b2')] }, ok: false },
    { name: 'proof made against an older ownership of the same key', t: { by: 'prov_b2', at: T + 10, prev: { provider: 'prov_a1', since: T - 1 }, usdc: [payTo('prov_b2')] }, ok: false },
    { name: 'the owner itself', t: { by: 'prov_a1', at: T + 10, prev: a0, usdc: [payTo('prov_a1')] }, ok: false },
  ] satisfies Array<{ name: string; t: TakeOver; ok: boolean }>)('$name', ({ t, ok }) => {
    const before = create(listingDefinition, register).snapshot;
    const r = step(listingDefinition, before, takeOver(t));
    expect(r.accepted).toBe(ok);
    expect(ctxOf(r.snapshot).provider_id).toBe(ok ? t.by : 'prov_a1');
    expect(ctxOf(r.snapshot).assets[0]?.pay_to).toBe(payTo(ok ? t.by : 'prov_a1'));
    if (!ok) expect(r.snapshot).toEqual(before);
  });

  it("status is what the takeover's probe shows against the new terms; the old owner's history stays but no longer verifies it", () => {
    let snap = create(listingDefinition, register).snapshot;
    for (let i = 1; i <= 5; i++) snap = step(listingDefinition, snap, probeBy('prov_a1', T + i, 'ok')).snapshot;
    const t = { by: 'prov_b2' as const, at: T + 100, prev: a0, usdc: [payTo('prov_b2')] };
    const ok = step(listingDefinition, snap, takeOver(t));
    // Five ok probes of the old terms plus the takeover's ok probe: verified, now by the new key.
    expect(ok.status).toBe('verified');
    const mismatch = step(listingDefinition, snap, takeOver({ ...t, outcome: 'mismatch' }));
    expect(mismatch.status).toBe('unverified');
    const rec = listingRecord(ctxOf(mismatch.snapshot), mismatch.status as ListingStatus);
    expect(rec.recent_scans).toHaveLength(6);
    expect(rec.recent_scans[0]).toMatchObject({ at: Math.floor((T + 95) / 1000), outcome: 'mismatch' });
    expect(rec.provider_id).toBe('prov_b2');
  });

  it('a probe judged against the previous owner, recorded after the takeover, is not recorded; the old owner can no longer update', () => {
    const taken = step(listingDefinition, create(listingDefinition, register).snapshot, takeOver({ by: 'prov_b2', at: T + 10, prev: a0, usdc: [payTo('prov_b2')] })).snapshot;
    expect(step(listingDefinition, taken, probeBy('prov_a1', T + 20, 'pay_to_mismatch')).accepted).toBe(false);
    expect(step(listingDefinition, taken, probeBy('prov_b2', T + 20, 'ok')).accepted).toBe(true);
    expect(step(listingDefinition, taken, parse({ type: 'listing.update', id: 'u1', at: T + 30, ...fields('prov_a1') })).accepted).toBe(false);
  });

  it('A -> B -> A within one probe, all in one millisecond: the probe read at A\'s first ownership and a takeover proven against it are ignored (ADR 0077)', () => {
    const a = { provider: 'prov_a1', since: T, gen: 0 };
    let snap = create(listingDefinition, register).snapshot;
    // B and then A again take the listing over in the same millisecond as A registered it.
    snap = step(listingDefinition, snap, takeOver({ by: 'prov_b2', at: T, prev: a, usdc: [payTo('prov_b2')] }, 'tb')).snapshot;
    snap = step(listingDefinition, snap, takeOver({ by: 'prov_a1', at: T, prev: { provider: 'prov_b2', since: T, gen: 1 }, usdc: [payTo('prov_a1')] }, 'ta')).snapshot;
    expect({ owner: ctxOf(snap).provider_id, since: ctxOf(snap).owner_since, gen: ctxOf(snap).owner_generation }).toEqual({ owner: 'prov_a1', since: T, gen: 2 });
    // Owner and start are A's again: only the generation tells the first ownership from this one.
    expect(step(listingDefinition, snap, probeBy('prov_a1', T + 1, 'pay_to_mismatch', 0)).accepted).toBe(false);
    expect(step(listingDefinition, snap, takeOver({ by: 'prov_c3', at: T + 1, prev: a, usdc: [payTo('prov_c3')] })).accepted).toBe(false);
    expect(step(listingDefinition, snap, probeBy('prov_a1', T + 1, 'ok', 2)).accepted).toBe(true);
    expect(step(listingDefinition, snap, takeOver({ by: 'prov_c3', at: T + 1, prev: { ...a, gen: 2 }, usdc: [payTo('prov_c3')] })).accepted).toBe(true);
  });

  it('model: any run of takeovers (fresh or stale, proven or not, with or without a generation), updates and probes leaves the one owner the model predicts; the journal replays to the snapshot', () => {
    const key = fc.constantFrom<Key>(...KEYS);
    // `dt` 0 puts an event in the same millisecond as the one before, so ownerships can share a start.
    const op = fc.oneof(
      // Half the proofs name the taker, so ownerships change often enough to come back to a key (A -> B -> A).
      fc.record({ kind: fc.constant('take' as const), by: key, named: fc.oneof(fc.constant('self' as const), fc.constantFrom<Key | 'none'>(...KEYS, 'none')), stale: fc.nat(3), legacy: fc.boolean(), dt: fc.nat(1) }),
      fc.record({ kind: fc.constant('update' as const), by: key, dt: fc.nat(1) }),
      // A probe read at an earlier ownership (`stale` back), or from before ADR 0077 (no generation, any key's terms).
      fc.record({ kind: fc.constant('probe' as const), by: key, stale: fc.nat(2), legacy: fc.boolean(), outcome: fc.constantFrom<ProbeOutcome>('ok', 'pay_to_mismatch', 'timeout'), dt: fc.nat(1) }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 40, size: 'max' }), (ops) => {
        let snap = create(listingDefinition, register).snapshot;
        const journal: ListingEvent[] = [register];
        // Every ownership so far, newest last: a stale proof or probe names one of the earlier ones.
        const owners: Array<{ provider: Key; since: number; gen: number }> = [{ provider: 'prov_a1', since: T, gen: 0 }];
        let at = T;
        ops.forEach((o, i) => {
          at += o.dt;
          const cur = owners.at(-1)!;
          let e: ListingEvent;
          let expected: boolean;
          if (o.kind === 'take') {
            const prev = owners[Math.max(0, owners.length - 1 - o.stale)]!;
            const payee = o.named === 'self' ? o.by : o.named;
            const named = payee === 'none' ? [] : [payTo(payee)];
            e = takeOver({ by: o.by, at, prev: { provider: prev.provider, since: prev.since, gen: o.legacy ? undefined : prev.gen }, usdc: named }, `t${i}`);
            // Without a generation, an earlier ownership of the same key begun in the same millisecond passes for the current one;
            // with one, an earlier ownership of the same key at the same count (left there by events without one) does.
            const current = prev.provider === cur.provider && (o.legacy ? prev.since === cur.since : prev.gen === cur.gen);
            expected = o.by !== cur.provider && current && payee === o.by;
          } else if (o.kind === 'update') {
            e = parse({ type: 'listing.update', id: `u${i}`, at, ...fields(o.by) });
            expected = o.by === cur.provider;
          } else if (o.legacy) {
            e = probeBy(o.by, at, o.outcome, undefined, `p${i}`);
            expected = o.by === cur.provider;
          } else {
            const read = owners[Math.max(0, owners.length - 1 - o.stale)]!;
            e = probeBy(read.provider, at, o.outcome, read.gen, `p${i}`);
            expected = read.provider === cur.provider && read.gen === cur.gen;
          }
          const r = step(listingDefinition, snap, e);
          // Pure: the same snapshot and event give the same result again.
          expect(step(listingDefinition, JSON.parse(JSON.stringify(snap)) as PersistedSnapshot, e)).toEqual(r);
          expect(r.accepted).toBe(expected);
          // A takeover from before ADR 0077 (no generation) keeps the count, as the previous release did.
          if (o.kind === 'take' && expected) owners.push({ provider: o.by, since: at, gen: cur.gen + (o.legacy ? 0 : 1) });
          if (r.accepted) journal.push(e);
          snap = r.snapshot;
          expect(ctxOf(snap).provider_id).toBe(owners.at(-1)!.provider);
          expect(ctxOf(snap).owner_generation ?? 0).toBe(owners.at(-1)!.gen);
          expect(ctxOf(snap).assets.every((a) => a.pay_to === payTo(owners.at(-1)!.provider))).toBe(true);
        });
        expect(replay(listingDefinition, journal)).toEqual(snap);
      }),
      { numRuns: 300 },
    );
  });
});
