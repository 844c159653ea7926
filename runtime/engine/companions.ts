import type { SqlParam } from '../../storage/db.ts';
import type { ApplyResult, CreateCompanion } from './actor-types.ts';
import { COMPANION_REFUSED } from './write-statement.ts';

/** Two companions as one (`ActorHost.apply` takes one): `a`'s CTEs and parameters, then `b`'s. */
export function joinCompanions(a: CreateCompanion, b: CreateCompanion): CreateCompanion {
  const guards = (n: number) => [a.guard?.(n), b.guard?.(n + a.arity)].filter((g): g is string => g !== undefined);
  return {
    name: `${a.name}+${b.name}`,
    arity: a.arity + b.arity,
    cte: (n) => `${a.cte(n)},\n${b.cte(n + a.arity)}`,
    params: (created) => [...a.params(created), ...b.params(created)],
    ...((a.guard ?? b.guard) && { guard: (n: number) => guards(n).join(' AND ') }),
    ...((a.unique ?? b.unique) && { unique: [...(a.unique ?? []), ...(b.unique ?? [])] }),
    ...(batchable(a) && batchable(b) && { batch: joinBatches(a.batch!, b.batch!) }),
  };
}

type Batch = NonNullable<CreateCompanion['batch']>;

/** Whether a companion can be written in a batch statement: it has a batch form, which decides its guard per event if it has one. */
export function batchable(c: Pick<CreateCompanion, 'batch' | 'guard'>): boolean {
  return c.batch !== undefined && (c.guard === undefined || c.batch.guard !== undefined);
}

const joined = (parts: ReadonlyArray<string | undefined>, by: string) => parts.filter((p): p is string => p !== undefined).join(by);

function joinBatches(a: Batch, b: Batch): Batch {
  const first = a.arity ?? 1;
  const ga = a.guard;
  const gb = b.guard;
  return {
    arity: first + (b.arity ?? 1),
    ...((a.cte ?? b.cte) && { cte: (n: number, applied?: string) => joined([a.cte?.(n, applied), b.cte?.(n + first, applied)], ',\n') }),
    rows: (r) => [...a.rows(r), ...b.rows(r)],
    ...((ga ?? gb) && {
      guard: {
        ...((ga?.cte ?? gb?.cte) && { cte: (n: number) => joined([ga?.cte?.(n), gb?.cte?.(n + first)], ',\n') }),
        ...((ga?.holds ?? gb?.holds) && { holds: (x: string) => joined([ga?.holds?.(x), gb?.holds?.(x)], ' AND ') }),
        ...((ga?.sure ?? gb?.sure) && { sure: (n: number) => joined([ga?.sure?.(n), gb?.sure?.(n + first)], ' AND ') }),
      },
    }),
  };
}

/**
 * The batch parameters of one companion over several events: each event's own companion (one
 * name, one shape) gives its rows, gathered per parameter into one JSON array.
 */
export function companionRows(c: Pick<CreateCompanion, 'batch'>, each: ReadonlyArray<readonly [CreateCompanion, ApplyResult]>): SqlParam[] {
  const lists: Array<Array<Record<string, SqlParam>>> = Array.from({ length: c.batch!.arity ?? 1 }, () => []);
  for (const [own, result] of each) {
    for (const [i, rows] of own.batch!.rows(result).entries()) lists[i]!.push(...rows);
  }
  return lists.map((rows) => JSON.stringify(rows));
}

/** Whether a write failed because the companion was refused: its guard, or one of its unique keys taken. */
export function companionRefused(c: CreateCompanion, err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (c.guard && err.message.includes(COMPANION_REFUSED)) return true;
  return violatesUnique(err, c.unique ?? []);
}

/** Whether `err` is a unique violation of one of `names`, as the pg driver and PGlite report it. */
export function violatesUnique(err: unknown, names: readonly string[]): boolean {
  if (!(err instanceof Error) || (err as { code?: string }).code !== '23505') return false;
  const where = `${(err as { constraint?: string }).constraint ?? ''} ${err.message}`;
  return names.some((name) => where.includes(name));
}
