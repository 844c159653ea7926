/**
 * Admission with leases (`Gate`, storage/migrations/0002_merchants.sql) on PGlite: several gateway processes (one
 * `Gate` each) share the buckets exactly, an IP refusal leaves the key's quota alone,
 * revocation and suspension take effect on the next request, a keyless request served from
 * the IP lease costs no round trip, and claims batched into one statement keep the
 * Idempotency-Key rules.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { Gate, type GateInput, type GateLimits } from './gate.ts';
import { Merchants } from './merchants.ts';
import { hashApiKey } from './secrets.ts';

const pepper = randomBytes(32);
let db: Db;
let merchants: Merchants;
let queries = 0;
let counted: Db;

beforeAll(async () => {
  db = await openDb({ dataDir: 'memory' });
  merchants = new Merchants(db, pepper);
  counted = {
    ...db,
    query: (sql, params) => {
      queries++;
      return db.query(sql, params);
    },
  };
});
afterAll(async () => {
  await db.close();
});

const limits = (key: number, ip: number): GateLimits => ({
  key: { capacity: key, perMinute: key },
  ip: { capacity: ip, perMinute: ip },
  takeoverAfterMs: 60_000,
});

async function newKey(): Promise<{ merchant: string; hash: string; key: string }> {
  const m = await merchants.create({ name: `Gate ${randomBytes(3).toString('hex')}` });
  return { merchant: m.merchant_id, hash: hashApiKey(pepper, m.keys.test.secret), key: m.keys.test.secret };
}

const admitted = (g: Awaited<ReturnType<Gate['pass']>>) => g.ip.ok && g.key !== null && g.keyBucket?.ok === true;

describe('Gate with leases', () => {
  it('two processes (two gates) share one key bucket exactly', async () => {
    const a = new Gate(db, limits(3, 1_000));
    const b = new Gate(db, limits(3, 1_000));
    const k = await newKey();
    const seen: boolean[] = [];
    for (const g of [a, b, a, b, a, b]) seen.push(admitted(await g.pass({ ip: '10.0.0.1', keyHash: k.hash })));
    expect(seen).toEqual([true, true, true, false, false, false]);
    a.close();
    b.close();
  });

  it('an IP refusal does not consume the key quota, and X-RateLimit figures stay truthful', async () => {
    const g = new Gate(db, limits(5, 2));
    const k = await newKey();
    const first = await g.pass({ ip: '10.0.1.1', keyHash: k.hash });
    expect(Math.floor(first.keyBucket!.tokens)).toBe(4);
    expect(Math.floor(first.ip.tokens)).toBe(1);
    expect(admitted(await g.pass({ ip: '10.0.1.1', keyHash: k.hash }))).toBe(true);
    for (let i = 0; i < 3; i++) {
      const refused = await g.pass({ ip: '10.0.1.1', keyHash: k.hash });
      expect(refused.ip.ok).toBe(false);
      expect(Math.floor(refused.ip.tokens)).toBe(0);
    }
    const elsewhere = await g.pass({ ip: '10.0.1.2', keyHash: k.hash });
    expect(admitted(elsewhere)).toBe(true);
    expect(Math.floor(elsewhere.keyBucket!.tokens)).toBe(2);
    g.close();
  });

  it('revocation and suspension take effect on the next request', async () => {
    const g = new Gate(db, limits(100, 1_000));
    const k = await newKey();
    expect(admitted(await g.pass({ ip: '10.0.2.1', keyHash: k.hash }))).toBe(true);
    expect(admitted(await g.pass({ ip: '10.0.2.1', keyHash: k.hash }))).toBe(true);
    await merchants.setStatus(k.merchant, 'suspended');
    expect((await g.pass({ ip: '10.0.2.1', keyHash: k.hash })).key?.merchantStatus).toBe('suspended');
    await merchants.setStatus(k.merchant, 'active');
    expect(admitted(await g.pass({ ip: '10.0.2.1', keyHash: k.hash }))).toBe(true);
    await merchants.revokeKey(k.key);
    expect((await g.pass({ ip: '10.0.2.1', keyHash: k.hash })).key).toBeNull();
    g.close();
  });

  it('a keyless request served from the IP lease makes no round trip; a keyed one makes one', async () => {
    const g = new Gate(counted, limits(100, 1_000));
    const k = await newKey();
    await g.pass({ ip: '10.0.3.1', keyHash: k.hash });
    await g.pass({ ip: '10.0.3.1', keyHash: k.hash });
    await g.pass({ ip: '10.0.3.1', keyHash: null });
    await g.pass({ ip: '10.0.3.1', keyHash: null });
    const before = queries;
    await g.pass({ ip: '10.0.3.1', keyHash: null });
    expect(queries - before).toBe(0);
    // Warm by now (the chunks doubled): the key and its read, nothing else.
    await g.pass({ ip: '10.0.3.1', keyHash: k.hash, readId: 'pay_' + 'a'.repeat(24) });
    expect(queries - before).toBe(1);
    g.close();
  });

  it('claims batched into one statement keep the Idempotency-Key rules', async () => {
    const g = new Gate(counted, limits(1_000, 1_000), { maxInFlight: 1 });
    const k = await newKey();
    const other = await merchants.createKey(k.merchant, 'test', 'secret');
    const otherHash = hashApiKey(pepper, other.key);
    // Warm both keys' leases (chunks double while they run out) so the claims take the batched path.
    for (let i = 0; i < 20; i++) await Promise.all([k.hash, otherHash].map((h) => g.pass({ ip: '10.0.4.1', keyHash: h })));
    const claim = (hash: string, key: string, requestHash: string): GateInput => ({ ip: '10.0.4.1', keyHash: hash, claim: { key, requestHash, newIntentId: `pay_${randomBytes(12).toString('hex')}` } });
    const before = queries;
    const outcomes = await Promise.all([
      g.pass(claim(k.hash, 'lead', 'h0')),
      // These four queue behind the first and leave in one statement.
      g.pass(claim(k.hash, 'same', 'h1')),
      g.pass(claim(k.hash, 'same', 'h1')),
      g.pass(claim(otherHash, 'same', 'h2')),
      g.pass(claim(otherHash, 'fresh', 'h3')),
    ]);
    expect(outcomes.map((o) => o.claim?.outcome)).toEqual(['claimed', 'claimed', 'in_flight', 'reused', 'claimed']);
    // Two statements for five claims, plus the full rules for the two that found the key taken.
    expect(queries - before).toBe(4);
    const claimed = outcomes[1].claim;
    expect(claimed?.outcome === 'claimed' && claimed.intentId).toMatch(/^pay_/);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM idempotency_keys WHERE merchant = $1`, [k.merchant]);
    expect(rows[0]!.n).toBe(3);
    g.close();
  });
});
