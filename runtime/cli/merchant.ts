/**
 * `anmpay merchant create --name <name> [--email <email>] [--json]` and
 * `anmpay merchant suspend|activate <merchant_id> [--json]`, through the operator API.
 * `create --json` prints exactly
 * {"merchant_id","handle","dashboard":{"email","password"},"keys":{"test":{"secret","publishable"},"live":{"secret","publishable"}}};
 * the password and the secret keys are shown this once.
 */
import { z } from 'zod';
import { list, parse, positionals, str, usageError } from './args.ts';
import { groupUsage } from './help.ts';
import { expectShape } from './env.ts';
import { opsCall } from './ops-client.ts';
import { runCommand, type CommandResult } from './output.ts';

const USAGE = groupUsage('merchant');

const pair = z.strictObject({ secret: z.string(), publishable: z.string() });
const created = z.strictObject({
  merchant_id: z.string(),
  handle: z.string(),
  dashboard: z.strictObject({ email: z.string(), password: z.string() }),
  keys: z.strictObject({ test: pair, live: pair }),
});
const status = z.strictObject({ id: z.string(), status: z.string() });
const origins = z.strictObject({ id: z.string(), allowed_origins: z.array(z.string()) });

export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  const a = parse(rest, { name: { type: 'string' }, email: { type: 'string' }, origin: { type: 'string', multiple: true } }, USAGE);
  if (sub === 'create') {
    const name = str(a, 'name');
    if (!name) throw usageError('--name <name> is required', USAGE);
    const email = str(a, 'email');
    const m = expectShape(created, await opsCall('POST', '/ops/api/merchants', { name, ...(email ? { email } : {}) }), 'merchant create');
    const text = [
      `merchant ${m.merchant_id} created (shown once, keep it)`,
      `  handle             ${m.handle}`,
      `  dashboard login    ${m.dashboard.email} / ${m.dashboard.password}`,
      `  test secret        ${m.keys.test.secret}`,
      `  test publishable   ${m.keys.test.publishable}`,
      `  live secret        ${m.keys.live.secret}`,
      `  live publishable   ${m.keys.live.publishable}`,
    ].join('\n');
    return { data: m, text };
  }
  if (sub === 'suspend' || sub === 'activate') {
    const [id] = positionals(a, 1, USAGE);
    const s = expectShape(status, await opsCall('POST', `/ops/api/merchants/${encodeURIComponent(id!)}/${sub}`), `merchant ${sub}`);
    return { data: s, text: `merchant ${s.id} is ${s.status}` };
  }
  if (sub === 'origins') {
    // Replaces the list: the origins allowed to frame /c/{id}?embed=1 (widget.js); none given clears it.
    const [id] = positionals(a, 1, USAGE);
    const o = expectShape(origins, await opsCall('POST', `/ops/api/merchants/${encodeURIComponent(id!)}/allowed-origins`, { origins: list(a, 'origin') }), 'merchant origins');
    return { data: o, text: `merchant ${o.id} allowed origins: ${o.allowed_origins.length ? o.allowed_origins.join(' ') : '(none: embedding refused)'}` };
  }
  throw usageError(`unknown subcommand ${JSON.stringify(sub ?? '')}`, USAGE);
}
