/**
 * `anmpay keys create --merchant <id> --mode test|live [--kind secret|publishable] [--json]`
 * prints {"id","merchant","mode","kind","key","prefix"} (the key is shown this once);
 * `anmpay keys revoke <key_id | key> [--json]` prints {"id","revoked_at"}.
 */
import { z } from 'zod';
import { parse, positionals, str, usageError } from './args.ts';
import { groupUsage } from './help.ts';
import { expectShape } from './env.ts';
import { opsCall } from './ops-client.ts';
import { runCommand, type CommandResult } from './output.ts';

const USAGE = groupUsage('keys');

const createdKey = z.strictObject({ id: z.string(), merchant: z.string(), mode: z.string(), kind: z.string(), key: z.string(), prefix: z.string() });
const revoked = z.strictObject({ id: z.string(), revoked_at: z.string() });

export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  const a = parse(rest, { merchant: { type: 'string' }, mode: { type: 'string' }, kind: { type: 'string' } }, USAGE);
  if (sub === 'create') {
    const merchant = str(a, 'merchant');
    const mode = str(a, 'mode');
    const kind = str(a, 'kind') ?? 'secret';
    if (!merchant) throw usageError('--merchant <id> is required', USAGE);
    if (mode !== 'test' && mode !== 'live') throw usageError('--mode test|live is required', USAGE);
    if (kind !== 'secret' && kind !== 'publishable') throw usageError('--kind must be secret or publishable', USAGE);
    const k = expectShape(createdKey, await opsCall('POST', `/ops/api/merchants/${encodeURIComponent(merchant)}/keys`, { mode, kind }), 'keys create');
    return { data: k, text: `${k.kind} ${k.mode} key ${k.id} for ${k.merchant} (shown once): ${k.key}`, quiet: k.key };
  }
  if (sub === 'revoke') {
    const [target] = positionals(a, 1, USAGE);
    // A key itself travels in the body, never in a URL.
    const doc = /^a[sp]k_(live|test)_/.test(target!)
      ? await opsCall('POST', '/ops/api/keys/revoke', { key: target })
      : await opsCall('POST', `/ops/api/keys/${encodeURIComponent(target!)}/revoke`);
    const r = expectShape(revoked, doc, 'keys revoke');
    return { data: r, text: `key ${r.id} revoked at ${r.revoked_at}` };
  }
  throw usageError(`unknown subcommand ${JSON.stringify(sub ?? '')}`, USAGE);
}
