import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `anmpay webhook set|rotate|list --merchant <id> --mode test|live [--url <url>] [--grace <seconds>] [--json]`
 * Talks to the running service at ANMPAY_URL (default http://127.0.0.1:3000) with the
 * operator token (ANMPAY_OPERATOR_TOKEN, else <ANMPAY_DATA_DIR or .data>/operator-token).
 * `set` and `rotate` print {"endpoint_id","url","secret"}: the secret is shown this once.
 */
const USAGE = `usage: anmpay webhook set    --merchant <id> --mode test|live --url <url> [--json]
       anmpay webhook rotate --merchant <id> --mode test|live [--grace <seconds>] [--json]
       anmpay webhook list   --merchant <id> [--mode test|live] [--json]
env: ANMPAY_URL (default http://127.0.0.1:3000), ANMPAY_OPERATOR_TOKEN (else .data/operator-token)
`;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

async function operatorToken(env: NodeJS.ProcessEnv): Promise<string> {
  if (env.ANMPAY_OPERATOR_TOKEN) return env.ANMPAY_OPERATOR_TOKEN;
  const file = path.join(env.ANMPAY_DATA_DIR ?? '.data', 'operator-token');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    throw new CliError(`no operator token: set ANMPAY_OPERATOR_TOKEN or start the service once to create ${file}`);
  }
}

interface Io {
  env: NodeJS.ProcessEnv;
  out: (s: string) => void;
  fetch?: typeof fetch;
}

async function call(io: Io, method: 'GET' | 'POST', urlPath: string, body?: unknown): Promise<unknown> {
  const base = (io.env.ANMPAY_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const token = await operatorToken(io.env);
  let res: Response;
  try {
    res = await (io.fetch ?? fetch)(`${base}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new CliError(`cannot reach the service at ${base}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`unexpected ${res.status} answer from ${base}: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } }).error;
    throw new CliError(`${res.status} ${e?.code ?? 'error'}: ${e?.message ?? text.slice(0, 200)}`);
  }
  return json;
}

export async function runWebhook(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === 'help' || sub === '--help') {
    io.out(USAGE);
    return sub ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      merchant: { type: 'string' },
      mode: { type: 'string' },
      url: { type: 'string' },
      grace: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.merchant) throw new CliError(`--merchant is required\n${USAGE}`, 2);
  const m = encodeURIComponent(values.merchant);
  const needMode = (): string => {
    if (values.mode !== 'test' && values.mode !== 'live') throw new CliError(`--mode test|live is required\n${USAGE}`, 2);
    return values.mode;
  };
  const print = (human: string, json: unknown): void => io.out(values.json ? `${JSON.stringify(json)}\n` : human);
  switch (sub) {
    case 'set': {
      const mode = needMode();
      if (!values.url) throw new CliError(`--url is required\n${USAGE}`, 2);
      const r = (await call(io, 'POST', `/ops/api/merchants/${m}/webhooks`, { mode, url: values.url })) as { endpoint_id: string; url: string; secret: string | null };
      const out = { endpoint_id: r.endpoint_id, url: r.url, secret: r.secret };
      print(
        r.secret
          ? `endpoint ${r.endpoint_id} (${mode}) -> ${r.url}\nsigning secret (shown once): ${r.secret}\n`
          : `endpoint ${r.endpoint_id} (${mode}) now -> ${r.url}; the signing secret is unchanged (rotate for a new one)\n`,
        out,
      );
      return 0;
    }
    case 'rotate': {
      const mode = needMode();
      const grace = values.grace === undefined ? undefined : Number(values.grace);
      if (grace !== undefined && !Number.isInteger(grace)) throw new CliError('--grace must be a whole number of seconds', 2);
      const r = (await call(io, 'POST', `/ops/api/merchants/${m}/webhooks/rotate`, { mode, ...(grace === undefined ? {} : { grace_seconds: grace }) })) as {
        endpoint_id: string;
        url: string;
        secret: string;
        previous_secrets_expire_at: string;
      };
      print(`endpoint ${r.endpoint_id} (${mode}): new signing secret (shown once): ${r.secret}\nprevious secret(s) keep signing until ${r.previous_secrets_expire_at}\n`, {
        endpoint_id: r.endpoint_id,
        url: r.url,
        secret: r.secret,
      });
      return 0;
    }
    case 'list': {
      const r = (await call(io, 'GET', `/ops/api/merchants/${m}/webhooks`)) as { data: Array<{ endpoint_id: string; mode: string; url: string; status: string; secrets: unknown[] }> };
      const data = values.mode ? r.data.filter((e) => e.mode === values.mode) : r.data;
      print(data.length === 0 ? 'no webhook endpoints\n' : data.map((e) => `${e.endpoint_id}  ${e.mode}  ${e.status}  ${e.url}  (${e.secrets.length} active secret(s))\n`).join(''), data);
      return 0;
    }
    default:
      throw new CliError(`unknown webhook command: ${sub}\n${USAGE}`, 2);
  }
}

/** Entry from the dispatcher in main.ts. */
export async function main(argv: string[]): Promise<number> {
  try {
    return await runWebhook(argv, { env: process.env, out: (s) => process.stdout.write(s) });
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    const usage = err instanceof CliError ? err.exitCode : String((err as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS') ? 2 : 1;
    return usage;
  }
}
