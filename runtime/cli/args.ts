/**
 * Argument parsing shared by the CLI commands: node:util parseArgs in strict mode (an
 * unknown flag is a usage error, exit 2) plus the value checks every chain command needs.
 */
import { parseArgs } from 'node:util';
import type { NetworkName } from '../../machines/chain/index.ts';
import { CliError } from './output.ts';

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
}

/** `--json` and `--quiet` (`-q`) are accepted everywhere; `usage` is shown with any parse error. */
export function parse(argv: string[], options: OptionSpec, usage: string): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' }, ...options }, allowPositionals: true, strict: true });
    return { positionals, values };
  } catch (e) {
    throw new CliError('usage', `${e instanceof Error ? e.message : String(e)}; usage: ${usage}`, 2);
  }
}

export function usageError(message: string, usage: string): CliError {
  return new CliError('usage', `${message}; usage: ${usage}`, 2);
}

export function str(a: ParsedArgs, name: string): string | undefined {
  const v = a.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function list(a: ParsedArgs, name: string): string[] {
  const v = a.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** Exactly `n` positionals after the subcommand, else a usage error. */
export function positionals(a: ParsedArgs, n: number, usage: string): string[] {
  if (a.positionals.length !== n) throw usageError(`expected ${n} argument(s), got ${a.positionals.length}`, usage);
  return a.positionals;
}

export function networkOpt(a: ParsedArgs): NetworkName | undefined {
  const v = str(a, 'network');
  if (v === undefined) return undefined;
  if (v !== 'test' && v !== 'live') throw new CliError('usage', `--network must be test or live, got ${JSON.stringify(v)}`, 2);
  return v;
}

const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** A positive nANM amount (decimal digits, at most 2^64-1). */
export function nanm(value: string, what: string, opts: { allowZero?: boolean } = {}): bigint {
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw new CliError('usage', `${what} must be a whole number of nANM, got ${JSON.stringify(value)}`, 2);
  const n = BigInt(value);
  if (n > U64_MAX) throw new CliError('usage', `${what} exceeds 2^64-1 nANM`, 2);
  if (n === 0n && !opts.allowZero) throw new CliError('usage', `${what} must be greater than 0`, 2);
  return n;
}

export function intArg(value: string, what: string, min: number): number {
  if (!/^[0-9]+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new CliError('usage', `${what} must be an integer >= ${min}, got ${JSON.stringify(value)}`, 2);
  }
  return Number(value);
}
