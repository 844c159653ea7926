import { describe, expect, it } from 'vitest';
import { writeStatement, type WriteParts } from './write-statement.ts';

const shapes: WriteParts[] = [];
for (const kind of ['create', 'update', 'fast', 'locked'] as const) {
  for (const effects of [0, 7]) {
    shapes.push({
      ...(kind === 'create' && { create: true }),
      ...(kind === 'update' && { update: true }),
      ...(kind === 'fast' && { fast: true }),
      outbox: (effects & 1) > 0,
      timerDeletes: (effects & 2) > 0,
      timerUpserts: (effects & 4) > 0,
      companions: [{ name: 'c', arity: 1, cte: (n) => `c AS (SELECT $${n}::int AS x)`, guard: () => 'true' }],
    });
  }
}

describe('the write statement', () => {
  it('reads whether its single-row writes happened without aggregates (an Agg node per count costs every event)', () => {
    for (const p of shapes) {
      const sql = writeStatement(p);
      expect(sql).not.toMatch(/count\(/i);
      expect(sql).toContain('coalesce((SELECT 1 FROM pe), 0) AS fresh');
      if (p.update || p.fast) expect(sql).toContain('coalesce((SELECT 1 FROM up), 0) AS n');
    }
  });
});
