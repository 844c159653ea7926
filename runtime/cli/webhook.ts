/**
 * `anmpay webhook set|rotate|list --merchant <id> --mode test|live [--url <url>] [--grace <s>] [--json]`
 * Calls the running service's operator API (`/ops/api/merchants/:merchant/webhooks`) at
 * ANMPAY_URL (default http://127.0.0.1:3000) with the operator token (ANMPAY_OPERATOR_TOKEN,
 * else <ANMPAY_DATA_DIR or .data>/operator-token). `set` and `rotate` print
 * {"endpoint_id","url","secret"}: the secret is shown this once.
 */
import { z } from 'zod';
import { intArg, parse, str, usageError } from './args.ts';
import { groupUsage } from './help.ts';
import { expectShape } from './env.ts';
import { opsCall as call } from './ops-client.ts';
import { runCommand, type CommandResult } from './output.ts';

const USAGE = groupUsage('webhook');

const secretDoc = z.object({ endpoint_id: z.string(), url: z.string(), secret: z.string().nullable(), previous_secrets_expire_at: z.string().optional() });
const listDoc = z.object({
  data: z.array(z.object({ endpoint_id: z.string(), mode: z.string(), url: z.string(), status: z.string(), secrets: z.array(z.unknown()) }).passthrough()),
});

/** Entry from the dispatcher in main.ts. */
export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  const a = parse(rest, { merchant: { type: 'string' }, mode: { type: 'string' }, url: { type: 'string' }, grace: { type: 'string' } }, USAGE);
  const merchant = str(a, 'merchant');
  if (!merchant) throw usageError('--merchant <id> is required', USAGE);
  const base = `/ops/api/merchants/${encodeURIComponent(merchant)}/webhooks`;
  const modeArg = str(a, 'mode');
  if (modeArg !== undefined && modeArg !== 'test' && modeArg !== 'live') throw usageError('--mode must be test or live', USAGE);
  const mode = (): string => {
    if (!modeArg) throw usageError('--mode test|live is required', USAGE);
    return modeArg;
  };
  switch (sub) {
    case 'set': {
      const m = mode();
      const url = str(a, 'url');
      if (!url) throw usageError('--url <url> is required', USAGE);
      const r = expectShape(secretDoc, await call('POST', base, { mode: m, url }), 'webhook set');
      return {
        data: { endpoint_id: r.endpoint_id, url: r.url, secret: r.secret },
        text: r.secret
          ? `endpoint ${r.endpoint_id} (${m}) -> ${r.url}\nsigning secret (shown once): ${r.secret}`
          : `endpoint ${r.endpoint_id} (${m}) -> ${r.url}\nsigning secret unchanged (use \`anmpay webhook rotate\` for a new one)`,
      };
    }
    case 'rotate': {
      const m = mode();
      const g = str(a, 'grace');
      const grace = g === undefined ? undefined : intArg(g, '--grace', 0);
      const r = expectShape(secretDoc, await call('POST', `${base}/rotate`, { mode: m, ...(grace === undefined ? {} : { grace_seconds: grace }) }), 'webhook rotate');
      return {
        data: { endpoint_id: r.endpoint_id, url: r.url, secret: r.secret },
        text: `endpoint ${r.endpoint_id} (${m}): new signing secret (shown once): ${r.secret}\nprevious secret(s) keep signing until ${r.previous_secrets_expire_at ?? 'now'}`,
      };
    }
    case 'list': {
      const r = expectShape(listDoc, await call('GET', base), 'webhook list');
      const data = modeArg ? r.data.filter((e) => e.mode === modeArg) : r.data;
      return {
        data: { object: 'list', data },
        text: data.length === 0 ? 'no webhook endpoints' : data.map((e) => `${e.endpoint_id}  ${e.mode}  ${e.status}  ${e.url}  (${e.secrets.length} active secret(s))`).join('\n'),
      };
    }
    default:
      throw usageError(`unknown webhook command ${JSON.stringify(sub ?? '')}`, USAGE);
  }
}
