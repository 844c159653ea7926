/**
 * Where the CLI finds things: the devnet (ANMPAY_DEVNET_URL + /test or /live), the merchant
 * service (ANMPAY_URL), the marketplace (ANMPAY_MARKET_URL), the API key (ANMPAY_API_KEY) and
 * the wallet directory. Defaults point at a local `npm start`.
 */
import path from 'node:path';
import { z } from 'zod';
import type { NetworkName } from '../../machines/chain/index.ts';
import { AnmRpcClient } from '../chain/rpc-client.ts';
import { CliError } from './output.ts';

/** The devnet server's base URL. A URL copied from the service's log ends in /test or /live: that path is dropped, not doubled. */
export function devnetBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.ANMPAY_DEVNET_URL || 'http://127.0.0.1:3002').replace(/\/+$/, '').replace(/\/(test|live)$/, '');
}

export function rpcFor(network: NetworkName, env: NodeJS.ProcessEnv = process.env): AnmRpcClient {
  return new AnmRpcClient(`${devnetBaseUrl(env)}/${network}`);
}

export function serviceUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.ANMPAY_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
}

/** The marketplace (ANMPAY_MARKET_URL), default the one `npm start` runs on MARKETPLACE_PORT. */
export function marketUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.ANMPAY_MARKET_URL || 'http://127.0.0.1:3001').replace(/\/+$/, '');
}

export function walletsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.ANMPAY_DATA_DIR || '.data', 'wallets');
}

const errorEnvelope = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** GET a JSON document from the service; its error envelope becomes a CliError with the service's code. */
export function getServiceJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  return serviceJson('GET', url, headers);
}

/** Calls the service and reads its JSON answer; its error envelope becomes a CliError with the service's code. */
export async function serviceJson(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
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
    const env = errorEnvelope.safeParse(doc);
    if (env.success) throw new CliError(env.data.error.code, `${method} ${url}: HTTP ${res.status}: ${env.data.error.message}`);
    throw new CliError(res.status === 404 ? 'not_found' : 'http_error', `${method} ${url}: HTTP ${res.status}`);
  }
  return doc;
}

/** Parses a service document against `schema`, naming the fields that do not fit. */
export function expectShape<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) {
    throw new CliError('bad_service_response', `${what}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return r.data;
}
