import path from 'node:path';
import { z } from 'zod';
import { issueLine } from './issues-message.ts';

const port = z.coerce.number().int().min(0).max(65535);

/** What a process can run (ANMPAY_ROLES); the composition root (bin/services.ts) reads it. */
export const ROLES = ['gateway', 'runtime', 'indexer', 'marketplace'] as const;
export type Role = (typeof ROLES)[number];

const roles = z
  .string()
  .default(ROLES.join(','))
  .transform((text, ctx) => {
    const names = text.split(',').map((r) => r.trim()).filter(Boolean);
    const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
    if (unknown.length || !names.length) {
      ctx.addIssue({ code: 'custom', message: `${unknown.length ? `unknown role ${unknown.map((r) => JSON.stringify(r)).join(', ')}` : 'no role given'}; use a comma-separated list of ${ROLES.join(', ')}` });
      return z.NEVER;
    }
    return new Set(names as Role[]);
  });

/** Every setting the service reads from the environment; README's configuration table mirrors it. */
export const configSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  /**
   * Connections to PostgreSQL per process. A few per core: on 2 cores, 8 gave bench:api's
   * creates ~15 % less PostgreSQL CPU than 16 (fewer backends woken in turn), at the same p99.
   */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(8),
  NATS_URL: z.string().min(1).optional(),
  /** PostgreSQL schema (search_path) and NATS subject namespace: isolate several services on one database and server. */
  ANMPAY_DB_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
  NATS_NAMESPACE: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
  /** How long JetStream waits for an ack before it hands a message to another process (one that died holding it). */
  NATS_ACK_WAIT_MS: z.coerce.number().int().min(1000).default(30_000),
  /** What this process runs: gateway, runtime, indexer, marketplace (comma-separated; default all). */
  ANMPAY_ROLES: roles,
  ANMPAY_DATA_DIR: z.string().min(1).default('.data'),
  PORT: port.default(3000),
  MARKETPLACE_PORT: port.default(3001),
  /**
   * Processes serving the marketplace on MARKETPLACE_PORT (node:cluster, one port): one per
   * core lets it use every core. Above 1 it needs PostgreSQL and NATS (ADR 0051).
   */
  MARKET_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  DEVNET_PORT: port.default(3002),
  /** The demo seller's x402 endpoints (DESIGN §6), served beside the marketplace. */
  DEMO_SELLER_PORT: port.default(3003),
  /** A listener serving only `/metrics`, for processes whose roles serve no HTTP app (ADR 0027). */
  METRICS_PORT: port.optional(),
  /** Where the marketplace's fee legs pay; unset means a fixed demo address per lane. */
  MARKETPLACE_FEE_ADDRESS_USDC: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional(),
  MARKETPLACE_FEE_ADDRESS_ANM: z.string().min(1).optional(),
  /** The USDC lane's ledger: `sim` (the embedded simulated EIP-3009 ledger) or `rpc` (an EVM chain through viem). */
  USDC_LANE: z.enum(['sim', 'rpc']).default('sim'),
  /**
   * The USDC lane's network, CAIP-2 (`eip155:<chain id>`; default `eip155:8453`, Base): quotes,
   * discovery and the facilitator name it, the EIP-712 domain takes its chain id, and with
   * USDC_LANE=rpc the node at BASE_RPC_URL must serve that chain. Read as the chain id.
   */
  USDC_NETWORK: z
    .string()
    .regex(/^eip155:[1-9][0-9]{0,14}$/, 'an EVM network as CAIP-2, eip155:<chain id> (eip155:8453 for Base, eip155:84532 for Base Sepolia)')
    .transform((s) => Number(s.slice('eip155:'.length)))
    .optional(),
  /** EVM JSON-RPC of the chain the `rpc` USDC lane settles on (the chain of USDC_NETWORK). */
  BASE_RPC_URL: z.string().url().optional(),
  /** Private key (0x + 64 hex) of the relayer that submits `transferWithAuthorization` and pays its gas. */
  USDC_RELAYER_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
  /** The EIP-3009 token and its EIP-712 domain; unset means USDC on Base ("USD Coin", version "2"). */
  USDC_TOKEN_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional(),
  USDC_TOKEN_NAME: z.string().min(1).optional(),
  USDC_TOKEN_VERSION: z.string().min(1).optional(),
  /** First block searched for an authorization's earlier settlement (RPC providers cap log ranges). */
  USDC_LOGS_FROM_BLOCK: z.coerce.bigint().min(0n).optional(),
  DEVNET_BLOCK_MS: z.coerce.number().int().min(0).default(2000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** The marketplace's own public base (its discovery documents, fragments, extensions); unset: the host a caller reached it on. */
  MARKETPLACE_PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ANM_RATES: z.string().optional(),
  /** Node JSON-RPC per network; unset means the in-process devnet. */
  ANM_TEST_RPC_URL: z.string().url().optional(),
  ANM_RPC_URL: z.string().url().optional(),
  RATE_SOURCE_URL: z.string().url().optional(),
  ANMPAY_OPERATOR_TOKEN: z.string().min(16).optional(),
  ANMPAY_KEY_PEPPER: z.string().min(16).optional(),
  ANMPAY_ALLOW_PRIVATE_WEBHOOKS: z.enum(['0', '1']).default('0'),
  /** 1: anyone may create a merchant account at /dashboard/signup. */
  ANMPAY_OPEN_SIGNUP: z.enum(['0', '1']).default('0'),
  /** 1: `/shop` lists the merchants that opted in (DESIGN §7 "Shop"); off by default. */
  ANMPAY_SHOP_DIRECTORY: z.enum(['0', '1']).default('0'),
  /**
   * 1: a process running the marketplace serves the demo seller and lists it (ADR 0037); 0: not.
   * Unset: on over the embedded store (`npm start`), off over DATABASE_URL (a deployment).
   */
  ANMPAY_DEMO_SELLER: z.enum(['0', '1']).optional(),
  // Merchant API token buckets (spec Limits); raised only for benchmarks.
  RATE_LIMIT_KEY_PER_MIN: z.coerce.number().positive().default(100),
  RATE_LIMIT_KEY_BURST: z.coerce.number().min(1).default(100),
  RATE_LIMIT_IP_PER_MIN: z.coerce.number().positive().default(300),
  RATE_LIMIT_IP_BURST: z.coerce.number().min(1).default(300),
  /** Presses of Pay on one payment link from one IP per minute (DESIGN §7: 10); raised only for benchmarks. */
  ANMPAY_LINK_PAY_PER_MIN: z.coerce.number().positive().default(10),
  // On shutdown, how long /healthz answers 503 before the listener closes (a balancer's check interval).
  HTTP_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  /** Seconds a rotated-out webhook secret keeps signing (both active during the grace). */
  ANMPAY_WEBHOOK_ROTATION_GRACE_S: z.coerce.number().int().min(0).max(604_800).default(86_400),
  /** How long a claimed webhook delivery is kept from other processes; a crashed process's sends are retried after it. Over the 10 s send timeout. */
  ANMPAY_WEBHOOK_LEASE_MS: z.coerce.number().int().min(11_000).default(60_000),
  /** Seconds between the scanner's probes of a listing (plus up to a tenth at random). */
  ANMPAY_SCAN_INTERVAL_S: z.coerce.number().int().min(10).max(86_400).default(600),
  /** Probes in flight at once per runtime process. */
  ANMPAY_SCAN_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
});

export type Config = z.infer<typeof configSchema> & { pgDataDir: string };

/** A setting the service cannot start with: one line per setting, no stack (the process entry prints it). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? `invalid configuration: ${problems[0]!}` : `invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => issueLine(i, 'environment')));
  }
  return { ...parsed.data, pgDataDir: path.join(parsed.data.ANMPAY_DATA_DIR, 'pg') };
}
