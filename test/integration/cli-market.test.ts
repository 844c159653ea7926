/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   assertions read the CLI's JSON output. */
/**
 * `anmpay market register|search|quote|buy` and `anmpay usdc create|fund|balance` through the
 * real binary (a child process) against a marketplace listening here on real PostgreSQL + NATS
 * (PGlite otherwise), with the simulated USDC ledger's faucet served (DESIGN §5, §6).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, runCli } from '../helpers/cli.ts';
import { FEE_ADDRESSES, useMarket } from '../market/harness.ts';

const h = useMarket({ faucet: true, anm: { confirmations: 1 } });
let dir: string;
const tag = randomBytes(4).toString('hex');
const capability = `forecast${tag}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'anm-cli-market-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANMPAY_MARKET_URL: h.url, ANMPAY_DATA_DIR: dir, ANMPAY_DEVNET_URL: h.chain.devnet.url });
const cli = (args: string[]) => runCli(args, env());
const json = <T = any>(args: string[]) => cliJson<T>(args, env()); // eslint-disable-line @typescript-eslint/no-explicit-any
const file = (name: string) => path.join(dir, name);

describe('anmpay market and usdc', () => {
  let seller: string;
  let buyer: string;
  let resourceId: string;

  it('usdc create writes owner-only key files; -q prints the address alone', { timeout: 60_000 }, async () => {
    const s = await cli(['usdc', 'create', '--out', file('seller.json'), '-q']);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/^0x[0-9a-fA-F]{40}\n$/);
    seller = s.stdout.trim();
    expect((await stat(file('seller.json'))).mode & 0o777).toBe(0o600);
    buyer = (await json<{ address: string; key_file: string }>(['usdc', 'create', '--out', file('buyer.json')])).address;
    const again = await cli(['usdc', 'create', '--out', file('buyer.json')]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/^error \(file_exists\)/)]);
  });

  it('market register signs the listing with the seller key (EIP-191); the marketplace checks it and lists it', { timeout: 60_000 }, async () => {
    const r = await json(['market', 'register', '--name', `Weather ${capability}`, '--endpoint', `https://seller.example/${tag}`, '--usdc-price', '0.02', '--key', file('seller.json'), '--tag', 'weather', '--tag', capability, '--description', 'Hourly forecast']);
    expect(r).toMatchObject({ status: 'unverified', tags: ['weather', capability], pricing: { asset: 'USDC', seller_price: '0.020000', total_price: '0.020100' } });
    expect(r.accepted_assets[0].pay_to.toLowerCase()).toBe(seller.toLowerCase());
    resourceId = r.resource_id;
    // Registering again with the same key updates it; -q prints the id alone.
    const q = await cli(['market', 'register', '--name', `Weather ${capability} v2`, '--endpoint', `https://seller.example/${tag}`, '--usdc-price', '0.02', '--key', file('seller.json'), '--tag', capability, '-q']);
    expect([q.code, q.stdout]).toEqual([0, `${resourceId}\n`]);
    expect((await h.req('GET', `/api/v1/resources/${resourceId}`)).json.name).toBe(`Weather ${capability} v2`);
  });

  it('market search finds it (free); -q prints resource ids one a line; a ceiling under the total excludes it', { timeout: 60_000 }, async () => {
    const found = await json(['market', 'search', capability, '--asset', 'USDC']);
    expect(found.data.map((x: { resource_id: string }) => x.resource_id)).toEqual([resourceId]);
    const ids = await cli(['market', 'search', capability, '-q']);
    expect(ids.stdout).toBe(`${resourceId}\n`);
    const text = await cli(['market', 'search', capability, '--max-price', '0.020099']);
    expect(text.stdout).toBe('no listing matches\n');
  });

  it('market quote makes a QUOTED intent and charges nothing; -q prints the intent id', { timeout: 60_000 }, async () => {
    const q = await cli(['market', 'quote', capability, '--max-price', '0.05', '-q']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stdout).toMatch(/^pi_[0-9a-f]+\n$/);
    expect((await h.req('GET', `/api/v1/purchases/${q.stdout.trim()}`)).json.status).toBe('QUOTED');
    const none = await cli(['market', 'quote', `nothing-${tag}`, '--json']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error.code).toBe('no_matching_resource');
    // --resource quotes that listing; the capability may be left out, and is not used to choose.
    for (const args of [['--resource', resourceId], [`nothing-${tag}`, '--resource', resourceId]]) {
      const pinned = await json(['market', 'quote', ...args, '--max-price', '0.05']);
      expect(pinned.resource.resource_id).toBe(resourceId);
    }
    const neither = await cli(['market', 'quote']);
    expect([neither.code, neither.stderr]).toEqual([2, expect.stringContaining('usage: anmpay market quote <capability>|--resource <res_id>')]);
  });

  it('usdc fund and balance go through the marketplace faucet', { timeout: 60_000 }, async () => {
    const funded = await cli(['usdc', 'fund', buyer, '1.5', '-q']);
    expect([funded.code, funded.stdout]).toEqual([0, '1500000\n']);
    expect(await json(['usdc', 'balance', buyer])).toEqual({ address: buyer.toLowerCase(), balance_atomic: '1500000', balance: '1.500000' });
    expect(await h.market.ledger.balanceOf(buyer)).toBe(1_500_000n);
  });

  it('market buy quotes, signs both legs with viem and purchases; the seller leg settles as an ordinary x402 payment, then the fee', { timeout: 90_000 }, async () => {
    const p = await json(['market', 'buy', capability, '--max-price', '0.05', '--key', file('buyer.json')]);
    expect(p.status).toBe('VERIFIED');
    expect(p.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.seller_payment.header).toBe('PAYMENT-SIGNATURE');
    const header = JSON.parse(Buffer.from(p.seller_payment.value, 'base64').toString());
    expect(header.accepted).toMatchObject({ scheme: 'exact', network: 'eip155:8453', amount: '20000' });
    expect(header.accepted.payTo.toLowerCase()).toBe(seller.toLowerCase());
    // Nothing moved at purchase; the seller settles through the facilitator and the fee follows.
    expect(await h.market.ledger.balanceOf(buyer)).toBe(1_500_000n);
    expect((await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } })).json.success).toBe(true);
    expect((await h.req('GET', `/api/v1/purchases/${p.intent_id}`)).json.status).toBe('SETTLED');
    expect(await h.market.ledger.balanceOf(buyer)).toBe(1_500_000n - 20_100n);
    expect(await h.market.ledger.balanceOf(seller)).toBe(20_000n);
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBeGreaterThanOrEqual(100n);
    // -q: the header value alone, ready for `curl -H "PAYMENT-SIGNATURE: $(anmpay market buy … -q)"`.
    const q = await cli(['market', 'buy', capability, '--key', file('buyer.json'), '--idempotency-key', `k-${tag}`, '-q']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stdout).toMatch(/^[A-Za-z0-9+/]+=*\n$/);
  });

  it('a buyer without the balance: the refusal says how to fund it', { timeout: 60_000 }, async () => {
    await cli(['usdc', 'create', '--out', file('poor.json')]);
    const r = await cli(['market', 'buy', capability, '--key', file('poor.json')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error \(invalid_payment\): .*insufficient_balance.*anmpay usdc fund 0x[0-9a-fA-F]{40} <usdc>/);
  });

  it('market buy on the ANM lane signs both transfers with the wallet (ML-DSA-65) at its next nonces; unfunded, it says how to fund it', { timeout: 120_000 }, async () => {
    const w = await cli(['wallet', 'create', '--network', 'live', '--out', file('anm-seller.json')]);
    expect(w.code, w.stderr).toBe(0);
    const listed = await json(['market', 'register', '--name', `Native ${capability}`, '--endpoint', `https://seller.example/anm-${tag}`, '--anm-price', '0.5', '--wallet', file('anm-seller.json'), '--tag', `anm${tag}`]);
    expect(listed.pricing).toMatchObject({ asset: 'ANM', network: 'native:1', seller_price: '0.500000000' });
    const anmBuyer = (await json<{ address: string }>(['wallet', 'create', '--network', 'live', '--out', file('anm-buyer.json')])).address;
    const poor = await cli(['market', 'buy', `anm${tag}`, '--asset', 'ANM', '--wallet', file('anm-buyer.json')]);
    expect(poor.code).toBe(1);
    expect(poor.stderr).toContain(`insufficient_balance`);
    expect(poor.stderr).toContain(`anmpay wallet fund ${anmBuyer} <nanm> --network live`);
    expect((await cli(['wallet', 'fund', anmBuyer, '1000000000', '--network', 'live'])).code).toBe(0);
    const p = await json(['market', 'buy', `anm${tag}`, '--asset', 'ANM', '--wallet', file('anm-buyer.json')]);
    expect(p.status).toBe('VERIFIED');
    const leg = JSON.parse(Buffer.from(p.seller_payment.value, 'base64').toString());
    expect(leg.accepted).toMatchObject({ scheme: 'exact-anm', network: 'native:1', asset: 'ANM', amount: '500000000', payTo: listed.accepted_assets[0].pay_to, extra: { reference: `mp1:${p.intent_id}:seller` } });
    expect(leg.payload.transaction).toMatch(/^[0-9a-f]+$/);
  });

  it('market search --asset prints each listing in the asset asked for, not its primary price (spec "asset" filter)', { timeout: 60_000 }, async () => {
    const both = `both${tag}`;
    const listed = await json(['market', 'register', '--name', `Both ${capability}`, '--endpoint', `https://seller.example/both-${tag}`, '--usdc-price', '0.02', '--anm-price', '0.5', '--key', file('seller.json'), '--wallet', file('anm-seller.json'), '--tag', both]);
    expect(listed.pricing.asset).toBe('USDC');
    const anm = await cli(['market', 'search', both, '--asset', 'ANM']);
    expect(anm.stdout).toBe(`${listed.resource_id}  0.502500000 ANM  Both ${capability}  https://seller.example/both-${tag}\n`);
    const usdc = await cli(['market', 'search', both]);
    expect(usdc.stdout).toBe(`${listed.resource_id}  0.020100 USDC  Both ${capability}  https://seller.example/both-${tag}\n`);
  });

  it('usage errors exit 2 with the usage line; --help lists both groups', { timeout: 60_000 }, async () => {
    const noKey = await cli(['market', 'buy', capability]);
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringContaining('usage: anmpay market buy <capability>')]);
    expect((await cli(['usdc', 'fund', '0xnope', '1'])).code).toBe(2);
    expect((await cli(['usdc', 'fund', buyer, '0.0000001'])).code).toBe(2);
    expect((await cli(['market', 'register', '--name', 'x'])).code).toBe(2);
    const help = await cli(['market', '--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('anmpay market buy <capability>')]);
  });
});
