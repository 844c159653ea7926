import type { CreateCompanion } from './actor-types.ts';

/** Two companions as one (`ActorHost.apply` takes one): `a`'s CTEs and parameters, then `b`'s. */
export function joinCompanions(a: CreateCompanion, b: CreateCompanion): CreateCompanion {
  const guards = (n: number) => [a.guard?.(n), b.guard?.(n + a.arity)].filter((g): g is string => g !== undefined);
  return {
    name: `${a.name}+${b.name}`,
    arity: a.arity + b.arity,
    cte: (n) => `${a.cte(n)},\n${b.cte(n + a.arity)}`,
    params: (created) => [...a.params(created), ...b.params(created)],
    ...((a.guard ?? b.guard) && { guard: (n: number) => guards(n).join(' AND ') }),
  };
}
