/** Where the CLI finds the devnet (docs/devnet.md "CLI"): ANMPAY_DEVNET_URL as a base, or as one network's URL. */
import { describe, expect, it } from 'vitest';
import { devnetBaseUrl, rpcFor } from './env.ts';

describe('ANMPAY_DEVNET_URL', () => {
  it.each([
    [undefined, 'http://127.0.0.1:3002'],
    ['http://127.0.0.1:3002', 'http://127.0.0.1:3002'],
    ['http://127.0.0.1:3002/', 'http://127.0.0.1:3002'],
    ['http://127.0.0.1:3002/test', 'http://127.0.0.1:3002'],
    ['http://127.0.0.1:3002/live/', 'http://127.0.0.1:3002'],
    ['https://node.example/anm/test', 'https://node.example/anm'],
    ['https://node.example/testnet', 'https://node.example/testnet'],
  ])('%s gives the base %s, never a doubled network path', (url, base) => {
    const env = url === undefined ? {} : { ANMPAY_DEVNET_URL: url };
    expect(devnetBaseUrl(env)).toBe(base);
    expect(rpcFor('test', env).url).toBe(`${base}/test`);
    expect(rpcFor('live', env).url).toBe(`${base}/live`);
  });
});
