/**
 * Monkey patches for the benches' traces (BENCH_TRACE): a hook run before or after each call of
 * a prototype's method, so that the code traced is the product's own and the libraries'
 * (node:http, the pg driver), unchanged, and only the bench installs the hooks.
 */
import pg from 'pg';

/** Runs `fn` with the receiver and arguments before each call of a prototype's method. */
export function before<T extends object>(proto: T, name: string, fn: (self: T, args: unknown[]) => unknown): void {
  const original = Reflect.get(proto, name) as (...a: unknown[]) => unknown;
  Reflect.set(proto, name, function (this: T, ...args: unknown[]) {
    fn(this, args);
    return original.apply(this, args);
  });
}

/** Runs `fn` with the receiver after each call of a prototype's method. */
export function after<T extends object>(proto: T, name: string, fn: (self: T) => unknown): void {
  const original = Reflect.get(proto, name) as (...a: unknown[]) => unknown;
  Reflect.set(proto, name, function (this: T, ...args: unknown[]) {
    const r = original.apply(this, args);
    fn(this);
    return r;
  });
}

/** The pg driver's Query: `submit` writes a statement to the socket, `handleReadyForQuery` reads its end. */
export const PG_QUERY_PROTO = (pg as unknown as { Query: { prototype: object } }).Query.prototype;
