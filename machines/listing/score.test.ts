/**
 * The listing machine's scanner record and score (DESIGN §5 "Scanner": status moves,
 * `x402_score` weights 50/20/20/10, labels, `insufficient_data` under five observations),
 * by example and as a model: a random run of probes and executions is scored again from the
 * plain list of what happened and must agree with the machine.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, step, type PersistedSnapshot } from '../kit/step.ts';
import type { ListingContext } from './context.ts';
import { listingDefinition } from './definition.ts';
import type { ListingEvent, ProbeOutcome } from './events.ts';
import { isUp, OFFLINE_AFTER, RECENT_SCANS, VERIFIED_RUN } from './score.ts';
import { listingRecord, type ListingStatus } from './view.ts';

const T = 1_800_000_000_000;
const INTERVAL = 600_000;
const register = {
  type: 'listing.register', id: 'r1', at: T, probe_in_ms: 1_234,
  resource_id: 'res_ab12', provider_id: 'prov_cd34', name: 'Weather', description: 'Forecasts', category: 'data', tags: ['weather'],
  endpoint: 'https://seller.example/weather', method: 'GET', model: 'per_call',
  assets: [{ asset: 'USDC', pay_to: '0x1111111111111111111111111111111111111111', seller_price_atomic: '10000' }],
  documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
} as const;
const parse = (e: unknown): ListingEvent => listingDefinition.events.parse(e);

type Probe = { outcome: ProbeOutcome; latency: number };
const probe = (i: number, p: Probe) =>
  parse({ type: 'listing.probed', id: `p${i}`, at: T + (i + 1) * INTERVAL, outcome: p.outcome, http_status: isUp(p.outcome) ? 402 : null, latency_ms: isUp(p.outcome) ? p.latency : null, detail: '', next_probe_in_ms: INTERVAL + 7 });

function run(events: ListingEvent[]) {
  let snap: PersistedSnapshot = create(listingDefinition, parse(register)).snapshot;
  for (const e of events) snap = step(listingDefinition, snap, e).snapshot;
  return { snap, rec: listingRecord(snap.context as ListingContext, snap.value as ListingStatus) };
}
const probes = (list: Probe[], from = 0) => list.map((p, i) => probe(from + i, p));
const times = (n: number, p: Probe): Probe[] => Array.from({ length: n }, () => p);
const OK: Probe = { outcome: 'ok', latency: 100 };
const DOWN: Probe = { outcome: 'timeout', latency: 0 };

describe('listing scanner record (DESIGN §5 "Scanner")', () => {
  it('registration schedules the first probe after the runtime jitter; a due round keeps the next one scheduled', () => {
    const c = create(listingDefinition, parse(register));
    expect(c.effects).toEqual([{ type: 'scheduleTimer', params: { name: 'probe', at: T + 1_234, event: 'listing.probe_due' } }]);
    const due = step(listingDefinition, c.snapshot, parse({ type: 'listing.probe_due', id: 'tmr:probe:1', at: T + 1_234, timer: 'probe', generation: 1 }));
    expect(due.accepted).toBe(true);
    expect(due.effects).toEqual([{ type: 'scheduleTimer', params: { name: 'probe', at: T + 1_234 + INTERVAL, event: 'listing.probe_due' } }]);
    const done = step(listingDefinition, due.snapshot, probe(0, OK));
    expect(done.effects).toEqual([{ type: 'scheduleTimer', params: { name: 'probe', at: T + INTERVAL + INTERVAL + 7, event: 'listing.probe_due' } }]);
  });

  it('insufficient_data under five observations, then a full score for a fast conformant seller', () => {
    const four = run(probes(times(4, OK)));
    expect(four.rec.status).toBe('verified');
    expect(four.rec).toMatchObject({ score_label: 'insufficient_data', x402_score: null, score_breakdown: null, uptime_observations: 4, uptime_30d: 1, latency_p50_ms: 100 });
    const five = run(probes(times(5, OK)));
    expect(five.rec).toMatchObject({ x402_score: 100, score_label: 'excellent', uptime_observations: 5, last_scan_at: Math.floor((T + 5 * INTERVAL) / 1000) });
    expect(five.rec.score_breakdown).toEqual({ availability: 50, latency: 20, conformance: 20, paid_call_success: 10 });
    expect(five.rec.recent_scans[0]).toEqual({ at: Math.floor((T + 5 * INTERVAL) / 1000), status: 402, latency_ms: 100, outcome: 'ok', detail: '' });
  });

  it('a seller answering a malformed 402 or 200 without payment is up but never verified', () => {
    const bad = run(probes([...times(3, { outcome: 'malformed', latency: 100 }), ...times(3, { outcome: 'no_payment_required', latency: 100 })]));
    expect(bad.rec.status).toBe('unverified');
    // Up every time (50), fast (20), never conformant (0), no executions: paid part follows conformance (0).
    expect(bad.rec).toMatchObject({ uptime_30d: 1, x402_score: 70, score_label: 'fair' });
  });

  it('going down for a while: degraded, offline after three unanswered probes, degraded on return, verified after a clean run', () => {
    const seq: Array<[Probe, ListingStatus]> = [
      ...times(5, OK).map((p): [Probe, ListingStatus] => [p, 'verified']),
      [DOWN, 'degraded'], [DOWN, 'degraded'], [DOWN, 'offline'], [DOWN, 'offline'],
      ...times(VERIFIED_RUN - 1, OK).map((p): [Probe, ListingStatus] => [p, 'degraded']),
      [OK, 'verified'],
    ];
    seq.forEach((_, n) => expect(run(probes(seq.slice(0, n + 1).map(([p]) => p))).rec.status, `after probe ${n + 1}`).toBe(seq[n]![1]));
    const end = run(probes(seq.map(([p]) => p))).rec;
    expect(end.uptime_observations).toBe(seq.length);
    expect(end.uptime_30d).toBe(Math.round(((seq.length - 4) / seq.length) * 1000) / 1000);
  });

  it('a changed listing must conform again; routed executions set the paid-call part', () => {
    const base = probes(times(5, OK));
    const upd = parse({ ...register, type: 'listing.update', id: 'u1', name: 'Weather 2' });
    expect(run([...base, upd]).rec.status).toBe('unverified');
    expect(run([...base, upd, probe(9, OK)]).rec.status).toBe('verified');
    const ex = (i: number, ok: boolean) => parse({ type: 'listing.executed', id: `x${i}`, at: T, intent_id: `pi_${i}`, ok });
    const r = run([...base, ex(1, true), ex(2, false)]).rec;
    expect(r.score_breakdown?.paid_call_success).toBe(5);
    expect(r.x402_score).toBe(95);
  });

  it('model: any run of probes and executions scores as recomputed from the plain list', () => {
    const outcome = fc.constantFrom<ProbeOutcome>('ok', 'ok', 'ok', 'mismatch', 'malformed', 'no_payment_required', 'http_error', 'server_error', 'timeout', 'unreachable');
    const op = fc.oneof(
      fc.record({ kind: fc.constant('probe' as const), outcome, latency: fc.integer({ min: 0, max: 5_000 }) }),
      fc.record({ kind: fc.constant('exec' as const), ok: fc.boolean() }),
    );
    // A deterministic example reaches each status, so coverage does not depend on chance.
    const downRun = [...times(6, OK), ...times(3, DOWN)].map((p) => ({ kind: 'probe' as const, ...p }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const events = ops.map((o, i) => (o.kind === 'probe' ? probe(i, o) : parse({ type: 'listing.executed', id: `x${i}`, at: T + i, intent_id: `pi_${i}`, ok: o.ok })));
        const { snap, rec } = run(events);
        expect(replay(listingDefinition, [parse(register), ...events])).toEqual(snap);
        const ps = ops.filter((o) => o.kind === 'probe');
        const xs = ops.filter((o) => o.kind === 'exec');
        const up = ps.filter((p) => isUp(p.outcome));
        const conform = ps.filter((p) => p.outcome === 'ok');
        expect(rec.uptime_observations).toBe(ps.length);
        expect(rec.recent_scans.length).toBe(Math.min(ps.length, RECENT_SCANS));
        const newest = ps.slice(-OFFLINE_AFTER);
        if (newest.length === OFFLINE_AFTER && newest.every((p) => !isUp(p.outcome))) expect(rec.status).toBe('offline');
        else if (conform.length === 0) expect(rec.status).toBe('unverified');
        else expect(['verified', 'degraded']).toContain(rec.status);
        if (ps.length < 5) {
          expect(rec.score_label).toBe('insufficient_data');
          expect(rec.x402_score).toBeNull();
          return;
        }
        const lat = ps.slice(-RECENT_SCANS).filter((p) => isUp(p.outcome)).map((p) => p.latency).sort((a, b) => a - b);
        const p50 = lat.length ? lat[Math.ceil(lat.length / 2) - 1]! : null;
        const conformShare = up.length ? conform.length / up.length : 0;
        const recentX = xs.slice(-50);
        const paid = recentX.length ? recentX.filter((x) => x.ok).length / recentX.length : conformShare;
        const expected = 50 * (up.length / ps.length) + (p50 === null ? 0 : 20 * Math.min(1, Math.max(0, (2000 - p50) / 1800))) + 20 * conformShare + 10 * paid;
        expect(rec.x402_score).toBe(Math.round(expected));
        expect(rec.x402_score).toBeGreaterThanOrEqual(0);
        expect(rec.x402_score).toBeLessThanOrEqual(100);
        const s = rec.x402_score!;
        expect(rec.score_label).toBe(s >= 90 ? 'excellent' : s >= 75 ? 'good' : s >= 50 ? 'fair' : 'poor');
      }),
      { numRuns: 300, examples: [[downRun], [[...times(7, OK)].map((p) => ({ kind: 'probe' as const, ...p }))]] },
    );
  });
});
