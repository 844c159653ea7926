/**
 * The viem USDC ledger against a local EVM node (ADR 0025): the test token keeps USDC v2's
 * EIP-712 domain, the chain's reverts read as the x402 SDK's reason codes, settlement is
 * idempotent per authorization, and the ledger refuses a token or chain it was not
 * configured for.
 */
import { randomBytes } from 'node:crypto';
import { domainSeparator, getAddress, HttpRequestError, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { domainOf, TRANSFER_TYPES, type Authorization } from '../../runtime/market/lanes/eip3009.ts';
import { settleFailure } from '../../runtime/market/lanes/usdc-viem-abi.ts';
import { openConfiguredUsdcLedger, UsdcViemLedger } from '../../runtime/market/lanes/usdc-viem.ts';
import { loadConfig } from '../../runtime/config.ts';
import { compileToken } from '../fixtures/evm/token.ts';
import { useEvmLane } from './evm-lane.ts';

const lane = useEvmLane();
const buyer = privateKeyToAccount(generatePrivateKey());
const payee = privateKeyToAccount(generatePrivateKey()).address;
const nowS = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  await lane.deployed.mint(buyer.address, 1_000_000n);
});

async function signed(o: { signer?: PrivateKeyAccount; value?: bigint; validAfter?: number; validBefore?: number; nonce?: Hex; from?: Hex } = {}) {
  const a: Authorization = {
    from: o.from ?? buyer.address,
    to: payee,
    value: String(o.value ?? 1_000n),
    validAfter: String(o.validAfter ?? nowS() - 60),
    validBefore: String(o.validBefore ?? nowS() + 600),
    nonce: o.nonce ?? `0x${randomBytes(32).toString('hex')}`,
  };
  const signature = await (o.signer ?? buyer).signTypedData({
    domain: domainOf(lane.token),
    types: TRANSFER_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: { from: getAddress(a.from), to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce as Hex },
  });
  return { a, signature };
}

describe('the EIP-3009 test token (test/fixtures/evm/Eip3009Token.sol)', () => {
  it('compiles with the pinned solc 0.8.26 and is the code deployed on the node', async () => {
    const c = compileToken();
    expect(c.compiler).toMatch(/^0\.8\.26\+/);
    // Immutables (the minter) are patched in at deployment; the rest of the runtime code is the compiler's.
    const onChain = await lane.client.getCode({ address: lane.deployed.address });
    expect(onChain?.length).toBe(c.deployedBytecode.length);
  });

  it("DOMAIN_SEPARATOR is USDC v2's: name, version, chain id 8453, the contract", async () => {
    const onChain = await lane.client.readContract({ address: lane.deployed.address, abi: lane.deployed.abi, functionName: 'DOMAIN_SEPARATOR' });
    expect(onChain).toBe(domainSeparator({ domain: domainOf(lane.token) }));
    expect(lane.token.chainId).toBe(8453);
  });
});

describe('UsdcViemLedger settles on chain with the SDK reason codes', () => {
  it('settles a signed authorization: one transaction, balances moved, authorizationState set; again is a replay of it', async () => {
    const { a, signature } = await signed({ value: 1_234n });
    const before = await lane.balance(payee);
    const [r1, r2] = await Promise.all([lane.ledger.transferWithAuthorization(a, nowS(), signature), lane.ledger.transferWithAuthorization(a, nowS(), signature)]);
    expect(r1).toMatchObject({ ok: true, replay: false });
    expect(r2).toEqual(r1); // concurrent settles of one authorization share one transaction
    expect((await lane.balance(payee)) - before).toBe(1_234n);
    expect(await lane.ledger.authorizationState(buyer.address, a.nonce)).toBe(true);
    const again = await lane.ledger.transferWithAuthorization(a, nowS(), signature);
    expect(again).toEqual({ ok: true, replay: true, tx: r1.ok ? r1.tx : '' });
    expect((await lane.balance(payee)) - before).toBe(1_234n);
  });

  const stranger = privateKeyToAccount(generatePrivateKey());
  const cases: { name: string; make: () => Promise<{ a: Authorization; signature: string; at?: number }>; reason: string }[] = [
    { name: 'signed by another key (FiatTokenV2: invalid signature)', make: () => signed({ signer: stranger }), reason: 'invalid_exact_evm_signature' },
    { name: 'more than the balance (ERC20: transfer amount exceeds balance)', make: () => signed({ value: 10n ** 12n }), reason: 'invalid_exact_evm_insufficient_balance' },
    { name: 'not valid yet on chain (authorization is not yet valid)', make: () => signed({ validAfter: nowS() + 3600 }), reason: 'invalid_exact_evm_payload_authorization_valid_after' },
    { name: 'expired on chain though not by our clock (authorization is expired)', make: async () => ({ ...(await signed({ validBefore: nowS() - 5 })), at: nowS() - 60 }), reason: 'invalid_exact_evm_payload_authorization_valid_before' },
    { name: 'expired by our clock: refused before any call', make: () => signed({ validBefore: nowS() }), reason: 'invalid_exact_evm_payload_authorization_valid_before' },
    {
      name: 'a nonce used by another authorization (authorization is used)',
      make: async () => {
        const first = await signed();
        expect((await lane.ledger.transferWithAuthorization(first.a, nowS(), first.signature)).ok).toBe(true);
        return signed({ nonce: first.a.nonce as Hex, value: 999n });
      },
      reason: 'invalid_exact_evm_nonce_already_used',
    },
  ];
  it.each(cases)('$name → $reason, nothing moves', async ({ make, reason }) => {
    const { a, signature, at } = await make();
    const before = [await lane.balance(buyer.address), await lane.balance(payee)];
    const r = await lane.ledger.transferWithAuthorization(a, at ?? nowS(), signature);
    expect(r).toMatchObject({ ok: false, reason });
    expect(r.ok === false && r.transient).toBeFalsy();
    expect([await lane.balance(buyer.address), await lane.balance(payee)]).toEqual(before);
  });

  it('a node that cannot be reached is a transient failure (tried again), never a refusal', () => {
    const f = settleFailure(new HttpRequestError({ url: 'http://127.0.0.1:9/', details: 'ECONNREFUSED' }));
    expect(f).toMatchObject({ reason: 'settlement_pending', transient: true });
  });
});

describe('USDC_LANE configuration (runtime/config.ts)', () => {
  it('sim (the default) keeps the embedded ledger; rpc without BASE_RPC_URL and USDC_RELAYER_KEY is a ConfigError naming both', async () => {
    expect(await openConfiguredUsdcLedger(loadConfig({}))).toBeUndefined();
    await expect(openConfiguredUsdcLedger(loadConfig({ USDC_LANE: 'rpc' }))).rejects.toThrow(/BASE_RPC_URL: required when USDC_LANE=rpc[\s\S]*USDC_RELAYER_KEY: required/);
  });

  it('rpc with the node, relayer and token from the environment opens the viem ledger on that token', async () => {
    const env = { USDC_LANE: 'rpc', BASE_RPC_URL: lane.node.url, USDC_RELAYER_KEY: lane.relayerKey, USDC_TOKEN_ADDRESS: lane.token.address, USDC_TOKEN_NAME: lane.token.name, USDC_TOKEN_VERSION: '2' };
    const ledger = await openConfiguredUsdcLedger(loadConfig(env));
    expect(ledger?.token).toEqual(lane.token);
    expect(await ledger?.balanceOf(buyer.address)).toBe(await lane.balance(buyer.address));
    expect(() => loadConfig({ ...env, USDC_RELAYER_KEY: '0x1234' })).toThrow(/USDC_RELAYER_KEY/);
  });
});

describe('UsdcViemLedger.open checks the configuration against the chain', () => {
  const open = (token: Partial<typeof lane.token>) => UsdcViemLedger.open({ rpcUrl: lane.node.url, relayerKey: lane.relayerKey, token: { ...lane.token, ...token } });
  it.each([
    { name: 'a token name that is not the contract’s', token: { name: 'USD Coin' }, error: /is "Local USD Coin" version "2"/ },
    { name: 'a version that is not the contract’s', token: { version: '1' }, error: /not the configured/ },
    { name: 'an address without the token', token: { address: '0x000000000000000000000000000000000000dEaD' }, error: /does not answer name\(\)\/version\(\)/ },
    { name: 'another chain id', token: { chainId: 1 }, error: /serves chain 8453, but the USDC lane is on chain 1/ },
  ])('refuses $name', async ({ token, error }) => {
    await expect(open(token)).rejects.toThrow(error);
  });
});
