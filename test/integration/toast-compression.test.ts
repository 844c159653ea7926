/**
 * Migration 0019 (ADR 0109): the long values written on every transition (the actor's
 * snapshot, its journal event, its outbox payload) are compressed with LZ4 on PostgreSQL; on
 * PGlite, built without LZ4, the migration leaves pglz and still applies.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../storage/db.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';

const COLUMNS = [
  ['actors', 'snapshot'],
  ['actor_events', 'event'],
  ['outbox', 'payload'],
] as const;

async function compressionOf(db: Db): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [table, column] of COLUMNS) {
    const { rows } = await db.query<{ c: string }>(
      'SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2',
      [table, column],
    );
    out[`${table}.${column}`] = rows[0]?.c ?? 'missing';
  }
  return out;
}

describe.each(backendFactories)('long values on %s', (name, open) => {
  const opened: Backend[] = [];
  afterAll(async () => {
    for (const b of opened) await b.close();
  });

  it(name === 'postgres+nats' ? 'are compressed with LZ4' : 'keep pglz where LZ4 is not built in', async () => {
    const b = await open();
    opened.push(b);
    const want = name === 'postgres+nats' ? 'l' : '';
    expect(await compressionOf(b.db)).toEqual({ 'actors.snapshot': want, 'actor_events.event': want, 'outbox.payload': want });
    if (name !== 'postgres+nats') return;
    // An ANM purchase's snapshot: the signed fee transfer as hex, past the TOAST threshold.
    const snapshot = { status: 'active', value: 'EXECUTING', context: { fee: { payload: { transaction: randomBytes(5_300).toString('hex') } } } };
    await b.db.query(
      `INSERT INTO actors (id, kind, machine, machine_version, state, snapshot, version) VALUES ('pi_lz4', 'purchase', 'purchase', 1, 'EXECUTING', $1::jsonb, 1)`,
      [JSON.stringify(snapshot)],
    );
    const { rows } = await b.db.query<{ method: string | null }>(`SELECT pg_column_compression(snapshot) AS method FROM actors WHERE id = 'pi_lz4'`);
    expect(rows[0]?.method).toBe('lz4');
  });
});
