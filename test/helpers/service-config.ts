import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../runtime/config.ts';

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
