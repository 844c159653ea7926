/**
 * The demo seller's recorded origin (ADR 0073): a process that does not serve the demo seller
 * allows exactly the origin the serving process recorded last, nothing for a malformed record
 * (ADR 0037: "one origin, not loopback"), and re-reads at most once a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../storage/db.ts';
import { openDb } from '../../../storage/open.ts';
import { asOrigin, recordDemoSellerOrigin, RecordedDemoOrigin } from './demo-origin.ts';

let db: Db;
beforeAll(async () => {
  db = await openDb({ dataDir: 'memory' });
}, 60_000);
afterAll(() => db?.close());

const KEY = 'market.demo_seller.origin';

describe('RecordedDemoOrigin', () => {
  it('allows nothing before a record, then exactly the last origin recorded once read again', async () => {
    let now = 0;
    const seen = new RecordedDemoOrigin(db, () => now);
    await seen.refresh();
    expect(seen.allows('http://127.0.0.1:3003')).toBe(false);
    await recordDemoSellerOrigin(db, 'http://127.0.0.1:3003');
    // Read within the second: the earlier answer stands.
    now = 999;
    await seen.refresh();
    expect(seen.allows('http://127.0.0.1:3003')).toBe(false);
    now = 1_000;
    await seen.refresh();
    expect(seen.allows('http://127.0.0.1:3003')).toBe(true);
    for (const other of ['http://127.0.0.1:3004', 'http://localhost:3003', 'https://127.0.0.1:3003', 'http://127.0.0.1:3003/', '']) expect(seen.allows(other), other).toBe(false);
    // A restart on another port replaces the record.
    await recordDemoSellerOrigin(db, 'http://127.0.0.1:4003');
    now = 2_000;
    await seen.refresh();
    expect([seen.allows('http://127.0.0.1:3003'), seen.allows('http://127.0.0.1:4003')]).toEqual([false, true]);
  });

  it('callers that come while a read is out wait for it: each then judges by the record', async () => {
    await db.query(`DELETE FROM settings WHERE key = $1`, [KEY]);
    const seen = new RecordedDemoOrigin(db, () => 0);
    await recordDemoSellerOrigin(db, 'http://127.0.0.1:5003');
    const first = seen.refresh();
    const second = seen.refresh();
    await second;
    expect(seen.allows('http://127.0.0.1:5003')).toBe(true);
    await first;
  });

  it('a record that is not exactly an http(s) origin allows nothing', async () => {
    const cases: unknown[] = [{ origin: 'http://127.0.0.1:3003/echo' }, { origin: 'HTTP://127.0.0.1:3003' }, { origin: 'file:///etc' }, { origin: 42 }, { origin: '' }, {}, null, 'http://127.0.0.1:3003'];
    for (const value of cases) {
      await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [KEY, JSON.stringify(value)]);
      const seen = new RecordedDemoOrigin(db);
      await seen.refresh();
      for (const origin of ['http://127.0.0.1:3003', 'file://', '42', '']) expect(seen.allows(origin), JSON.stringify(value)).toBe(false);
    }
  });

  it.each([
    ['http://127.0.0.1:3003', true],
    ['http://127.8.9.10:3003', true],
    ['http://[::1]:3003', true],
    ['http://localhost:3003', true],
    ['http://169.254.169.254', false],
    ['http://10.0.0.5:5432', false],
    ['http://192.168.1.2:3003', false],
    ['https://api.example', false],
    ['http://127.0.0.1.example:3003', false],
  ])('only a loopback origin is taken from the record (ADR 0073): %s → %s', (origin, allowed) => {
    expect(asOrigin(origin) !== undefined).toBe(allowed);
  });

  it('a failing read is not retried by every refusal: at most once a second', async () => {
    let now = 0;
    let reads = 0;
    const failing = { ...db, query: () => ((reads += 1), Promise.reject(new Error('database down'))) } as unknown as Db;
    const seen = new RecordedDemoOrigin(failing, () => now);
    for (let i = 0; i < 5; i++) await seen.refresh().catch(() => undefined);
    expect(reads).toBe(1);
    now = 1_000;
    await seen.refresh().catch(() => undefined);
    expect(reads).toBe(2);
  });
});
