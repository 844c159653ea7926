/**
 * The operator API as the CLI sees it: ANMPAY_URL (default http://127.0.0.1:3000) with the
 * operator token from ANMPAY_OPERATOR_TOKEN, else <ANMPAY_DATA_DIR or .data>/operator-token.
 * A service error envelope becomes a CliError carrying the service's code.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serviceUrl } from './env.ts';
import { CliError } from './output.ts';

export async function operatorToken(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.ANMPAY_OPERATOR_TOKEN) return env.ANMPAY_OPERATOR_TOKEN;
  const file = path.join(env.ANMPAY_DATA_DIR || '.data', 'operator-token');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    throw new CliError('operator_token_required', `set ANMPAY_OPERATOR_TOKEN or start the service once so that it creates ${file}`);
  }
}

export async function opsCall(method: 'GET' | 'POST', urlPath: string, body?: unknown, env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  const url = `${serviceUrl(env)}${urlPath}`;
  const token = await operatorToken(env);
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      signal: AbortSignal.timeout(30_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new CliError('service_unreachable', `cannot reach ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const text = await res.text();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CliError('bad_service_response', `${method} ${url}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const e = (doc as { error?: { code?: unknown; message?: unknown } }).error;
    throw new CliError(typeof e?.code === 'string' ? e.code : 'http_error', `${method} ${url}: HTTP ${res.status}${typeof e?.message === 'string' ? `: ${e.message}` : ''}`);
  }
  return doc;
}
