import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { DATABASE_URL, NATS_URL } from './backends.ts';

/**
 * The config of a whole service started in-process by a test: the data directory given, every
 * port chosen by the system, mining only on request, no logs, a known operator token, and no
 * demo seller unless `extra` asks for it (ANMPAY_DEMO_SELLER=1).
 */
export function inProcessConfig(dataDir: string, operatorToken: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    ANMPAY_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    MARKETPLACE_PORT: '0',
    DEVNET_PORT: '0',
    DEMO_SELLER_PORT: '0',
    ANMPAY_DEMO_SELLER: '0',
    DEVNET_BLOCK_MS: '0',
    LOG_LEVEL: 'silent',
    ANMPAY_OPERATOR_TOKEN: operatorToken,
    ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'),
    ...extra,
  });
}

/**
 * The settings of a process running the marketplace role alone over the real PostgreSQL and
 * NATS, isolated by `schema` (its PostgreSQL schema and NATS namespace), on a port the system
 * chooses, without logs.
 */
export function marketplaceRoleEnv(schema: string): Record<string, string> {
  return { ANMPAY_ROLES: 'marketplace', DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema, MARKETPLACE_PORT: '0', LOG_LEVEL: 'silent' };
}
