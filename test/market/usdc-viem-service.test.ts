/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON response bodies. */
/**
 * The composition root on the viem USDC lane (README "Configuration", ADR 0025): a
 * marketplace process started from the environment (`USDC_LANE=rpc`, `BASE_RPC_URL`,
 * `USDC_RELAYER_KEY`, `USDC_TOKEN_*`) on PostgreSQL + NATS quotes in the configured token and
 * names its relayer; a configuration the chain contradicts stops the start.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { loadConfig } from '../../runtime/config.ts';
import { dropSchema, realAvailable, uniqueName } from '../helpers/backends.ts';
import { marketplaceRoleEnv } from '../helpers/service-config.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { useEvmLane } from './evm-lane.ts';

const lane = useEvmLane();
const schema = uniqueName('usdcrpc');
let services: Services | undefined;

afterAll(async () => {
  await services?.stop();
  await dropSchema(schema);
});

const env = () => ({
  ...marketplaceRoleEnv(schema),
  USDC_LANE: 'rpc',
  BASE_RPC_URL: lane.node.url,
  USDC_RELAYER_KEY: lane.relayerKey,
  USDC_TOKEN_ADDRESS: lane.token.address,
  USDC_TOKEN_NAME: lane.token.name,
  USDC_TOKEN_VERSION: lane.token.version,
});

describe.runIf(realAvailable)('a marketplace process with USDC_LANE=rpc', () => {
  it('refuses to start when the configured token domain is not the chain’s', async () => {
    await expect(startServices(loadConfig({ ...env(), USDC_TOKEN_NAME: 'USD Coin' }))).rejects.toThrow(/not the configured "USD Coin"/);
  });

  it('quotes in the configured token and lists its relayer as the facilitator signer', async () => {
    services = await startServices(loadConfig(env()));
    const url = services.marketplace?.url ?? '';
    const s = seller();
    const json = (r: Response) => r.json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/api/v1/resources', await signedListing(s, { name: 'Ledger lookups', tags: ['ledger'], price: '0.5' }))).status).toBe(201);
    const q = await json(await post('/api/v1/route/quote', { capability: 'ledger', asset: 'USDC' }));
    expect(q.payment_requirements.accepts[0]).toMatchObject({ asset: lane.token.address, extra: { name: lane.token.name, version: '2' } });
    const supported = await json(await fetch(`${url}/facilitator/supported`));
    expect(supported.signers['eip155:*']).toEqual([privateKeyToAccount(lane.relayerKey).address]);
  });
});
