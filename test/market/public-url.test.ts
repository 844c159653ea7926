/**
 * The marketplace's own base URL (README "Configuration"): `PUBLIC_BASE_URL` is the merchant
 * service's (checkout_url, links) and must not leak into the marketplace's documents, whose
 * URLs start with `MARKETPLACE_PUBLIC_URL` when set, else with the host the caller reached.
 * The same marketplace-only process answers its load balancer's `/healthz`.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { dropSchema, realAvailable, uniqueName } from '../helpers/backends.ts';
import { marketplaceRoleEnv } from '../helpers/service-config.ts';
import { DRAIN_MS } from '../conformance/harness.ts';

const schema = uniqueName('mktpub');
let services: Services | undefined;

const start = (extra: Record<string, string>) =>
  startServices(
    loadConfig({
      ...marketplaceRoleEnv(schema),
      ANMPAY_DEMO_SELLER: '0',
      PUBLIC_BASE_URL: 'https://pay.merchant.example',
      ...extra,
    }),
  );

const endpoints = async (): Promise<Record<string, string>> => {
  const doc = (await (await fetch(`${services!.marketplace!.url}/.well-known/x402-marketplace`)).json()) as { endpoints: Record<string, string> };
  return doc.endpoints;
};

describe('MARKETPLACE_PUBLIC_URL (runtime/config.ts)', () => {
  it('is a URL', () => {
    expect(loadConfig({ MARKETPLACE_PUBLIC_URL: 'https://market.example' }).MARKETPLACE_PUBLIC_URL).toBe('https://market.example');
    expect(() => loadConfig({ MARKETPLACE_PUBLIC_URL: 'market.example' })).toThrow(ConfigError);
  });
});

describe.runIf(realAvailable)('the marketplace process names its own base, never PUBLIC_BASE_URL', () => {
  afterEach(async () => {
    await services?.stop();
    services = undefined;
  });
  afterAll(() => dropSchema(schema));

  it('unset: the host the caller reached (the marketplace port), though PUBLIC_BASE_URL is set', async () => {
    services = await start({});
    const e = await endpoints();
    expect(e.quote).toBe(`${services.marketplace!.url}/api/v1/route/quote`);
    expect(Object.values(e).every((u) => u.startsWith(`${services!.marketplace!.url}/`))).toBe(true);
  });

  it('ANMPAY_ROLES=marketplace alone serves /healthz for its load balancer (DESIGN §6), 503 for HTTP_DRAIN_MS on stop', async () => {
    services = await start({ HTTP_DRAIN_MS: String(DRAIN_MS) });
    const url = services.marketplace!.url;
    const ok = await fetch(`${url}/healthz`);
    expect([ok.status, await ok.json()]).toEqual([200, { status: 'ok' }]);
    // The drain is stop()'s first step, taken before its first await: 503 from here on.
    const stopping = services.stop();
    services = undefined;
    const draining = await fetch(`${url}/healthz`);
    expect([draining.status, await draining.json()]).toEqual([503, { status: 'draining' }]);
    await stopping;
  });

  it('set: every endpoint starts with it (a trailing slash dropped)', async () => {
    services = await start({ MARKETPLACE_PUBLIC_URL: 'https://market.example/' });
    const e = await endpoints();
    expect(e.facilitator).toBe('https://market.example/facilitator');
    expect(Object.values(e).every((u) => u.startsWith('https://market.example/'))).toBe(true);
  });
});
