/**
 * Token leases (ADR 0004): N simulated gateway processes (each its own `LeaseBook` and holder
 * name) share one bucket in one store (`anm_lease` on PGlite, simulated clock). Requests,
 * lease replies delivered late and out of order, requests never applied, failed round trips,
 * idle sweeps, crashes and time passing are interleaved at random. Across all processes, the
 * tokens the shared bucket lets go of (and that get used) in any window never exceed an exact
 * token bucket's, capacity + rate x window, and each is used within its lease's use period.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { LeaseBook, type BucketLimits, type BucketView, type LeaseReply, type LeaseRequest } from './leases.ts';

const T0 = Date.parse('2026-11-21T00:00:00Z');
const TTL = 10_000;

let db: Db;
beforeAll(async () => {
  db = await openDb({ dataDir: 'memory' });
});
afterAll(async () => {
  await db.close();
});

async function store(bucket: string, req: LeaseRequest, at: number): Promise<LeaseReply> {
  stats.trips++;
  const { rows } = await db.query<LeaseReply>(`SELECT granted, tokens, others FROM anm_lease($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
    bucket,
    req.holder,
    req.limits.capacity,
    req.limits.perMinute / 60,
    req.want,
    req.lease,
    req.release,
    req.unused,
    TTL,
    new Date(T0 + at),
  ]);
  return rows[0]!;
}

type Cmd =
  | { k: 'request'; p: number }
  | { k: 'trip'; i: number }
  | { k: 'apply'; i: number }
  | { k: 'deliver'; i: number }
  | { k: 'drop'; i: number }
  | { k: 'fail'; i: number; applied: boolean }
  | { k: 'sweep'; p: number }
  | { k: 'crash'; p: number }
  | { k: 'tick'; ms: number };

const cmd = (procs: number): fc.Arbitrary<Cmd> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.record({ k: fc.constant('request' as const), p: fc.nat(procs - 1) }) },
    { weight: 6, arbitrary: fc.record({ k: fc.constant('trip' as const), i: fc.nat(7) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('apply' as const), i: fc.nat(7) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('deliver' as const), i: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('drop' as const), i: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('fail' as const), i: fc.nat(7), applied: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('sweep' as const), p: fc.nat(procs - 1) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('crash' as const), p: fc.nat(procs - 1) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('tick' as const), ms: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 12_000 })) }) },
  );

interface Flight {
  p: number;
  book: LeaseBook;
  req: LeaseRequest;
  reply?: LeaseReply;
  /** A client request waits on it (a settlement from the sweep does not). */
  client: boolean;
}

/** A granted request: when it was served, and when the shared bucket let its token go. */
interface Grant {
  used: number;
  at: number;
}

let run = 0;
const stats = { runs: 0, grants: 0, trips: 0 };

/** Plays the commands against one bucket; returns every granted request. */
async function play(limits: BucketLimits, procs: number, fraction: number, cmds: Cmd[]): Promise<Grant[]> {
  const bucket = `key:prop-${run++}`;
  let now = 0;
  let names = 0;
  const newBook = () => new LeaseBook({ now: () => now, holder: `h${names++}`, ttlMs: TTL, useMs: TTL / 2, idleMs: 1_000, fraction });
  const books = Array.from({ length: procs }, newBook);
  const flights: Flight[] = [];
  const grants: Grant[] = [];
  // Store time at which each lease request was applied: where a granted token came from.
  const appliedAt = new Map<string, number>();
  const use = (v: BucketView | null) => {
    if (!v?.ok) return;
    const at = appliedAt.get(v.chunk!);
    if (at === undefined) throw new Error(`token from lease request ${v.chunk} that the store never applied`);
    grants.push({ used: now, at });
  };
  const send = (p: number, req: LeaseRequest, client: boolean) => {
    flights.push({ p, book: books[p]!, req, client });
  };
  const apply = async (f: Flight) => {
    appliedAt.set(f.req.lease, now);
    f.reply = await store(bucket, f.req, now);
  };
  const deliver = (f: Flight) => {
    flights.splice(flights.indexOf(f), 1);
    if (books[f.p] !== f.book) return;
    const v = f.book.settle(f.req, f.reply!, bucket);
    if (f.client) use(v);
  };
  for (const c of cmds) {
    switch (c.k) {
      case 'request': {
        const local = books[c.p]!.take(bucket);
        if (local) use(local);
        else send(c.p, books[c.p]!.request(bucket, limits), true);
        break;
      }
      case 'trip': {
        // The usual case: the oldest request reaches the store and its reply comes back.
        const f = flights.find((x) => !x.reply);
        if (f) {
          await apply(f);
          deliver(f);
        }
        break;
      }
      case 'apply': {
        const waiting = flights.filter((x) => !x.reply);
        const f = waiting[c.i % Math.max(1, waiting.length)];
        if (f) await apply(f);
        break;
      }
      case 'deliver': {
        const answered = flights.filter((x) => x.reply);
        const f = answered[c.i % Math.max(1, answered.length)];
        if (f) deliver(f);
        break;
      }
      case 'drop': {
        // Never applied (an earlier refusal in the same round trip stopped it).
        const f = flights.find((x) => !x.reply);
        if (f) {
          flights.splice(flights.indexOf(f), 1);
          if (books[f.p] === f.book) f.book.abort(f.req);
        }
        break;
      }
      case 'fail': {
        // The round trip failed: maybe applied, the process does not know.
        const f = flights.length === 0 ? undefined : flights.splice(c.i % flights.length, 1)[0];
        if (f) {
          if (c.applied && !f.reply) await apply(f);
          if (books[f.p] === f.book) {
            f.book.fail();
            f.req.done();
          }
        }
        break;
      }
      case 'sweep':
        for (const req of books[c.p]!.idle()) send(c.p, req, false);
        break;
      case 'crash': {
        // Requests already sent may still reach the store; their replies go nowhere.
        for (const f of flights.filter((x) => x.p === c.p)) if (!f.reply) await apply(f);
        books[c.p] = newBook();
        break;
      }
      case 'tick':
        now += c.ms;
        break;
    }
  }
  return grants;
}

/** Any window [a, b] of store time lets go of at most capacity + rate x (b - a) tokens that get used. */
function overdraw(grants: Grant[], limits: BucketLimits): string | null {
  const times = grants.map((g) => g.at).sort((a, b) => a - b);
  const perMs = limits.perMinute / 60_000;
  for (let i = 0; i < times.length; i++) {
    for (let j = i; j < times.length; j++) {
      const n = j - i + 1;
      const allowed = limits.capacity + perMs * (times[j]! - times[i]!) + 1e-6;
      if (n > allowed) return `${n} grants in [${times[i]}, ${times[j]}] ms, allowed ${allowed.toFixed(3)}`;
    }
  }
  return null;
}

describe('token leases across processes (anm_lease + LeaseBook)', () => {
  it('never grant more than the bucket allows, over any window, whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ capacity: fc.integer({ min: 1, max: 40 }), perMinute: fc.integer({ min: 1, max: 600 }) }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(0.1, 0.25, 0.5, 1),
        fc.integer({ min: 1, max: 4 }).chain((procs) => fc.array(cmd(procs), { minLength: 20, maxLength: 200, size: 'max' })),
        async (limits, procsWanted, fraction, cmds) => {
          const procs = Math.max(procsWanted, ...cmds.map((c) => ('p' in c ? c.p + 1 : 1)));
          const grants = await play(limits, procs, fraction, cmds);
          stats.runs++;
          stats.grants += grants.length;
          expect(overdraw(grants, limits)).toBeNull();
          // The bounded slack: a token is used within the use period of the lease that carried it.
          for (const g of grants) expect(g.used - g.at).toBeLessThan(TTL / 2);
        },
      ),
      { numRuns: 100 },
    );
    console.log(stats);
  });

  it('one process alone gets the whole burst, in few round trips, and truthful remaining counts', async () => {
    let now = 0;
    const book = new LeaseBook({ now: () => now, holder: 'solo', ttlMs: TTL });
    const limits = { capacity: 100, perMinute: 100 };
    const bucket = `key:solo-${run++}`;
    let granted = 0;
    let trips = 0;
    const remaining: number[] = [];
    for (;;) {
      let v = book.take(bucket);
      if (!v) {
        const req = book.request(bucket, limits);
        trips++;
        v = book.settle(req, await store(bucket, req, now), bucket);
      }
      if (!v.ok) break;
      granted++;
      remaining.push(Math.floor(v.tokens));
    }
    expect(granted).toBe(100);
    expect(trips).toBeLessThanOrEqual(25);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    // After the sweep settles the spent lease, the bucket refills to full.
    now += 61_000;
    for (const req of book.idle()) book.settle(req, await store(bucket, req, now), bucket);
    const req = book.request(bucket, limits);
    const v = book.settle(req, await store(bucket, req, now), bucket);
    expect(v).toMatchObject({ ok: true });
    expect(Math.floor(v.tokens)).toBe(99);
  });

  it("a crashed process's lease comes back after the lease lifetime", async () => {
    let now = 0;
    const limits = { capacity: 10, perMinute: 600 };
    const bucket = `key:crash-${run++}`;
    const a = new LeaseBook({ now: () => now, holder: 'a', ttlMs: TTL, fraction: 1 });
    // a leases 1, 2, then 3 tokens (at most half of what is left), spends them all and dies
    // without settling: its lease row still holds the last 3.
    for (let i = 0; i < 3; i++) {
      const q = a.request(bucket, limits);
      expect(a.settle(q, await store(bucket, q, now), bucket).ok).toBe(true);
      while (a.take(bucket)?.ok);
    }
    const look = (): LeaseRequest => ({ lease: `b:${now}`, bucket, limits, want: 0, release: [], unused: [], holder: 'b', sentAt: now, done: () => undefined });
    now += 2_000;
    // 20 tokens of refill since, but a's live lease still holds 3 of the 10.
    expect(await store(bucket, look(), now)).toEqual({ granted: 0, tokens: 7, others: 3 });
    now += TTL;
    expect(await store(bucket, look(), now)).toEqual({ granted: 0, tokens: 10, others: 0 });
  });
});
