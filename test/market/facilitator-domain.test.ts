/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * DESIGN §5 "Facilitator": `/facilitator/verify` and `/facilitator/settle` answer "in the SDK's
 * shapes and reason codes" (issue 20). The SDK's exact EVM facilitator (@x402/evm
 * `verifyEIP3009`) verifies the signature over the EIP-712 domain the requirements name
 * (`asset`, `extra.name`, `extra.version`), so a payment signed for USDC never verifies against
 * requirements naming another token; and the ledger holds one token (ADR 0075). Each refusal
 * moves nothing: balances unchanged, the authorization's nonce still unused. The stock clients
 * send the requests: `@x402/core`'s HTTPFacilitatorClient (v2) and `x402`'s useFacilitator (v1).
 */
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { useFacilitator } from 'x402/verify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { signLeg, type LegOptions } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();
const buyer = privateKeyToAccount(generatePrivateKey());
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const OTHER = `0x${'33'.repeat(20)}` as const;
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const AMOUNT = 1000n;

beforeAll(async () => {
  await h.market.ledger.fund(buyer.address, 1_000_000n);
});

const v2Requirements = (o: { asset?: string; extra?: Record<string, unknown> | null } = {}) => {
  const { extra = { name: 'USD Coin', version: '2' }, asset = USDC } = o;
  return { scheme: 'exact', network: 'eip155:8453' as const, asset, amount: AMOUNT.toString(), payTo, maxTimeoutSeconds: 60, ...(extra ? { extra } : {}) };
};
/** The same requirements as x402 v1 writes them (`base`, `maxAmountRequired`). */
const v1Requirements = (o: Parameters<typeof v2Requirements>[0] = {}) => {
  const { amount, network: _network, ...rest } = v2Requirements(o);
  return { ...rest, network: 'base' as const, maxAmountRequired: amount, resource: 'https://seller.example/x', description: '', mimeType: 'application/json' };
};

async function payment(version: 1 | 2, domain?: LegOptions['domain']) {
  const leg = await signLeg(buyer, { to: payTo, value: AMOUNT, ...(domain ? { domain } : {}) });
  return version === 2 ? leg : { x402Version: 1, scheme: 'exact', network: 'base', payload: leg.payload };
}

const state = async (nonce: string) => ({
  buyer: await h.market.ledger.balanceOf(buyer.address),
  payTo: await h.market.ledger.balanceOf(payTo),
  nonceUsed: await h.market.ledger.authorizationState(buyer.address, nonce),
});

/** The stock client of each version: it posts `{x402Version, paymentPayload, paymentRequirements}`. */
function stockClient(version: 1 | 2) {
  const url = `${h.url}/facilitator`;
  if (version === 2) return new HTTPFacilitatorClient({ url });
  const v1 = useFacilitator({ url: url as `${string}://${string}` });
  return { verify: (p: unknown, r: unknown) => v1.verify(p as never, r as never), settle: (p: unknown, r: unknown) => v1.settle(p as never, r as never) };
}

type Case = [name: string, signedFor: LegOptions['domain'] | undefined, requirements: { asset?: string; extra?: Record<string, unknown> | null }, reason: string];
const cases: Case[] = [
  ['signed for USDC, requirements naming another token (asset 0x3333…, extra Other/9)', undefined, { asset: OTHER, extra: { name: 'Other', version: '9' } }, 'invalid_exact_evm_signature'],
  ["signed for USDC, requirements naming another asset under USDC's name and version", undefined, { asset: OTHER }, 'invalid_exact_evm_signature'],
  ['signed for USDC, requirements naming USDC under another EIP-712 name', undefined, { extra: { name: 'Other', version: '2' } }, 'invalid_exact_evm_signature'],
  ['signed for USDC, requirements naming USDC under another EIP-712 version', undefined, { extra: { name: 'USD Coin', version: '9' } }, 'invalid_exact_evm_signature'],
  ['requirements without extra', undefined, { extra: null }, 'invalid_exact_evm_missing_eip712_domain'],
  ['requirements whose extra lacks version', undefined, { extra: { name: 'USD Coin' } }, 'invalid_exact_evm_missing_eip712_domain'],
  ['requirements whose extra has an empty name', undefined, { extra: { name: '', version: '2' } }, 'invalid_exact_evm_missing_eip712_domain'],
  ['signed for the other token its requirements name: a token the ledger does not hold', { name: 'Other', version: '9', verifyingContract: OTHER }, { asset: OTHER, extra: { name: 'Other', version: '9' } }, 'asset_not_deployed_contract'],
  ["signed under USDC's contract with another name, as the requirements say", { name: 'Other' }, { extra: { name: 'Other', version: '2' } }, 'invalid_exact_evm_token_name_mismatch'],
  ["signed under USDC's contract with another version, as the requirements say", { version: '9' }, { extra: { name: 'USD Coin', version: '9' } }, 'invalid_exact_evm_token_version_mismatch'],
];

describe.each([2, 1] as const)('DESIGN §5 "Facilitator" (issue 20): x402 v%i exact, the requirements\' EIP-712 domain', (version) => {
  const requirementsOf = version === 2 ? v2Requirements : v1Requirements;

  it.each(cases.map(([name, signedFor, r, reason]) => ({ name, signedFor, r, reason })))('$name → verify and settle answer $reason; nothing moves, the nonce stays unused', async ({ signedFor, r, reason }) => {
    const p = await payment(version, signedFor);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const client = stockClient(version);
    const requirements = requirementsOf(r);
    const before = await state(nonce);
    const verified = await client.verify(p as never, requirements as never);
    expect(verified).toMatchObject({ isValid: false, invalidReason: reason });
    const settled = await client.settle(p as never, requirements as never);
    expect(settled).toMatchObject({ success: false, errorReason: reason, transaction: '' });
    expect(await state(nonce)).toEqual({ ...before, nonceUsed: false });
  });

  it('the same payment against the requirements it was signed for verifies and settles (the control)', async () => {
    const p = await payment(version);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const client = stockClient(version);
    const before = await state(nonce);
    expect(await client.verify(p as never, requirementsOf() as never)).toMatchObject({ isValid: true, payer: buyer.address.toLowerCase() });
    expect(await client.settle(p as never, requirementsOf() as never)).toMatchObject({ success: true });
    expect(await state(nonce)).toEqual({ buyer: before.buyer - AMOUNT, payTo: before.payTo + AMOUNT, nonceUsed: true });
  });
});

describe('DESIGN §5 "Facilitator" (issue 20): a payload made by the stock x402Client, settled against another token', () => {
  it('the review reproduction: @x402/evm signs for USDC; settle against asset 0x3333… / Other 9 fails, payTo +0', async () => {
    const client = new x402Client().register('eip155:8453', new ExactEvmScheme(buyer));
    const p = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://x/y', description: '', mimeType: 'application/json' }, accepts: [{ ...v2Requirements(), extra: { name: 'USD Coin', version: '2' } }] });
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const before = await state(nonce);
    const st = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: p, paymentRequirements: v2Requirements({ asset: OTHER, extra: { name: 'Other', version: '9' } }) } });
    expect(st.json).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_signature' });
    expect(await state(nonce)).toEqual(before);
  });
});

describe('DESIGN §5 "Facilitator" (issue 20): a request the facilitator cannot serve says why, in the SDK\'s reasons', () => {
  type Body = Record<string, unknown>;
  const reasons: Array<[name: string, make: (p: Body, r: Body) => Body, reason: string, message: RegExp]> = [
    ['x402Version 3 in the body and the payment', (p, r) => ({ x402Version: 3, paymentPayload: { ...p, x402Version: 3 }, paymentRequirements: r }), 'invalid_x402_version', /x402Version 3 is not served/],
    ['x402Version 3 in the payment only', (p, r) => ({ paymentPayload: { ...p, x402Version: 3 }, paymentRequirements: r }), 'invalid_x402_version', /paymentPayload.x402Version 3/],
    ['a body of version 1 around a v2 payment', (p, r) => ({ x402Version: 1, paymentPayload: p, paymentRequirements: r }), 'invalid_x402_version', /not the paymentPayload's x402Version 2/],
    ['requirements for exact-anm on eip155:1 (no ANM node)', (p, r) => ({ x402Version: 2, paymentPayload: { ...p, accepted: { ...(p.accepted as Body), scheme: 'exact-anm', network: 'eip155:1' } }, paymentRequirements: { ...r, scheme: 'exact-anm', network: 'eip155:1' } }), 'unsupported_scheme', /no exact-anm on eip155:1/],
    ['requirements for a scheme not served (upto)', (p, r) => ({ x402Version: 2, paymentPayload: p, paymentRequirements: { ...r, scheme: 'upto' } }), 'unsupported_scheme', /no upto on eip155:8453/],
    ['a payment of another scheme than the requirements', (p, r) => ({ x402Version: 2, paymentPayload: { ...p, accepted: { ...(p.accepted as Body), scheme: 'exact-anm' } }, paymentRequirements: r }), 'invalid_exact_evm_scheme', /not an exact payment/],
    ['a payment for eip155:1 against requirements for eip155:8453', (p, r) => ({ x402Version: 2, paymentPayload: { ...p, accepted: { ...(p.accepted as Body), network: 'eip155:1' } }, paymentRequirements: r }), 'invalid_exact_evm_network_mismatch', /payment is for network eip155:1/],
    ['requirements for eip155:1', (p, r) => ({ x402Version: 2, paymentPayload: p, paymentRequirements: { ...r, network: 'eip155:1' } }), 'invalid_exact_evm_network_mismatch', /must be eip155:8453/],
    ['no paymentRequirements', (p) => ({ x402Version: 2, paymentPayload: p }), 'invalid_payment_requirements', /paymentRequirements is required/],
    ['requirements without amount', (p, r) => ({ x402Version: 2, paymentPayload: p, paymentRequirements: { ...r, amount: undefined } }), 'invalid_payment_requirements', /maxAmountRequired \(x402 v1\) or amount/],
    ['no paymentPayload', (_p, r) => ({ x402Version: 2, paymentRequirements: r }), 'invalid_payload', /paymentPayload is required/],
    ['a v2 payment without accepted', (p, r) => ({ x402Version: 2, paymentPayload: { ...p, accepted: undefined }, paymentRequirements: r }), 'invalid_payload', /paymentPayload.accepted/],
  ];

  it.each(reasons.map(([name, make, reason, message]) => ({ name, make, reason, message })))('$name → verify and settle answer $reason, nothing moves', async ({ make, reason, message }) => {
    const p = (await payment(2)) as Body;
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const before = await state(nonce);
    const body = make(p, v2Requirements());
    const v = await h.req('POST', '/facilitator/verify', { body });
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ isValid: false, invalidReason: reason });
    expect(v.json.invalidMessage).toMatch(message);
    const st = await h.req('POST', '/facilitator/settle', { body });
    expect(st.json).toMatchObject({ success: false, errorReason: reason, transaction: '' });
    expect(await state(nonce)).toEqual(before);
  });
});
