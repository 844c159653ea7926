/**
 * The operator API as the CLI sees it: ANMPAY_URL (default http://127.0.0.1:3000) with the
 * operator token from ANMPAY_OPERATOR_TOKEN, else <ANMPAY_DATA_DIR or .data>/operator-token.
 * A service error envelope becomes a CliError carrying the service's code.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serviceJson, serviceUrl } from './env.ts';
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
  return serviceJson(method, url, { authorization: `Bearer ${token}` }, body);
}
