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
import { SettleResponseSchema, VerifyResponseSchema } from 'x402/types';
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
/** The network each version's answers name: the payment's own, as the SDK's facilitators answer (ADR 0083). */
const NETWORK = { 2: 'eip155:8453', 1: 'base' } as const;

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

/** `v1Reason`: where @x402/evm's ExactEvmSchemeV1 words the reason otherwise (ADR 0083). */
type Case = [name: string, signedFor: LegOptions['domain'] | undefined, requirements: { asset?: string; extra?: Record<string, unknown> | null }, reason: string, v1Reason?: string];
const cases: Case[] = [
  ['signed for USDC, requirements naming another token (asset 0x3333…, extra Other/9)', undefined, { asset: OTHER, extra: { name: 'Other', version: '9' } }, 'invalid_exact_evm_signature'],
  ["signed for USDC, requirements naming another asset under USDC's name and version", undefined, { asset: OTHER }, 'invalid_exact_evm_signature'],
  ['signed for USDC, requirements naming USDC under another EIP-712 name', undefined, { extra: { name: 'Other', version: '2' } }, 'invalid_exact_evm_signature'],
  ['signed for USDC, requirements naming USDC under another EIP-712 version', undefined, { extra: { name: 'USD Coin', version: '9' } }, 'invalid_exact_evm_signature'],
  ['requirements without extra', undefined, { extra: null }, 'invalid_exact_evm_missing_eip712_domain'],
  ['requirements whose extra lacks version', undefined, { extra: { name: 'USD Coin' } }, 'invalid_exact_evm_missing_eip712_domain'],
  ['requirements whose extra has an empty name', undefined, { extra: { name: '', version: '2' } }, 'invalid_exact_evm_missing_eip712_domain'],
  ['signed for the other token its requirements name: a token the ledger does not hold', { name: 'Other', version: '9', verifyingContract: OTHER }, { asset: OTHER, extra: { name: 'Other', version: '9' } }, 'asset_not_deployed_contract', 'invalid_exact_evm_eip3009_not_supported'],
  ["signed under USDC's contract with another name, as the requirements say", { name: 'Other' }, { extra: { name: 'Other', version: '2' } }, 'invalid_exact_evm_token_name_mismatch'],
  ["signed under USDC's contract with another version, as the requirements say", { version: '9' }, { extra: { name: 'USD Coin', version: '9' } }, 'invalid_exact_evm_token_version_mismatch'],
];

describe.each([2, 1] as const)('DESIGN §5 "Facilitator" (issue 20): x402 v%i exact, the requirements\' EIP-712 domain', (version) => {
  const requirementsOf = version === 2 ? v2Requirements : v1Requirements;

  it.each(cases.map(([name, signedFor, r, v2, v1]) => ({ name, signedFor, r, reason: version === 1 ? (v1 ?? v2) : v2 })))('$name → verify and settle answer $reason; nothing moves, the nonce stays unused', async ({ signedFor, r, reason }) => {
    const p = await payment(version, signedFor);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const client = stockClient(version);
    const requirements = requirementsOf(r);
    const before = await state(nonce);
    const verified = await client.verify(p as never, requirements as never);
    expect(verified).toMatchObject({ isValid: false, invalidReason: reason, payer: buyer.address.toLowerCase() });
    const settled = await client.settle(p as never, requirements as never);
    expect(settled).toMatchObject({ success: false, errorReason: reason, transaction: '', network: NETWORK[version], payer: buyer.address.toLowerCase() });
    expect(await state(nonce)).toEqual({ ...before, nonceUsed: false });
  });

  it('the same payment against the requirements it was signed for verifies and settles (the control)', async () => {
    const p = await payment(version);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    const client = stockClient(version);
    const before = await state(nonce);
    expect(await client.verify(p as never, requirementsOf() as never)).toMatchObject({ isValid: true, payer: buyer.address.toLowerCase() });
    expect(await client.settle(p as never, requirementsOf() as never)).toMatchObject({ success: true, network: NETWORK[version] });
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

/*
 * DESIGN §5 "Facilitator": "in the SDK's shapes and reason codes". The SDK's exact EVM
 * facilitators check, after scheme, network and domain, in this order: signature, recipient,
 * validBefore, validAfter, value (@x402/evm `verifyEIP3009` for v2, `ExactEvmSchemeV1._verify`
 * for v1), then the chain (nonce, balance); each refusal names `payer` (authorization.from) and
 * each settle answer the payment's network. So a payment with several faults gets the reason
 * of the first in that order (ADR 0083).
 */
type Fault = 'signature' | 'recipient' | 'validBefore' | 'validAfter' | 'value' | 'balance';
const REASON: Record<1 | 2, Record<Fault, string>> = {
  2: {
    signature: 'invalid_exact_evm_signature',
    recipient: 'invalid_exact_evm_recipient_mismatch',
    validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
    validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
    value: 'invalid_exact_evm_payload_authorization_value_mismatch',
    balance: 'invalid_exact_evm_insufficient_balance',
  },
  1: {
    signature: 'invalid_exact_evm_signature',
    recipient: 'invalid_exact_evm_recipient_mismatch',
    validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
    validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
    value: 'invalid_exact_evm_authorization_value',
    balance: 'invalid_exact_evm_insufficient_balance',
  },
};
const unfunded = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey()).address;

/** A payment with the given faults: each alone is refused with its own reason. */
async function faulty(version: 1 | 2, faults: readonly Fault[]) {
  const has = (f: Fault) => faults.includes(f);
  const now = Math.floor(Date.now() / 1000);
  const signer = has('balance') ? unfunded : buyer;
  const leg = await signLeg(signer, {
    to: has('recipient') ? stranger : payTo,
    value: has('value') ? AMOUNT - 1n : AMOUNT,
    ...(has('validBefore') && { validBefore: now }),
    ...(has('validAfter') && { validAfter: now + 3600 }),
    ...(has('signature') && { domain: { chainId: 1 } }),
  });
  const p = version === 2 ? leg : { x402Version: 1, scheme: 'exact', network: 'base', payload: leg.payload };
  return { p, payer: signer.address.toLowerCase() };
}

const faultCases: Array<[name: string, faults: Fault[], first: Fault]> = [
  ['signed under another chain id', ['signature'], 'signature'],
  ['to another address', ['recipient'], 'recipient'],
  ['expiring within 6 s', ['validBefore'], 'validBefore'],
  ['valid only in an hour', ['validAfter'], 'validAfter'],
  ['one unit short', ['value'], 'value'],
  ['from a payer without the balance', ['balance'], 'balance'],
  ['signature, recipient and value wrong', ['signature', 'recipient', 'value'], 'signature'],
  ['recipient, validBefore and value wrong', ['recipient', 'validBefore', 'value'], 'recipient'],
  ['validBefore, validAfter and value wrong', ['validBefore', 'validAfter', 'value'], 'validBefore'],
  ['validAfter and value wrong', ['validAfter', 'value'], 'validAfter'],
  ['value wrong, from a payer without the balance', ['value', 'balance'], 'value'],
];

describe.each([2, 1] as const)('DESIGN §5 "Facilitator": x402 v%i exact refuses in the SDK\'s order, naming the payer and the payment\'s network', (version) => {
  const requirements = version === 2 ? v2Requirements() : v1Requirements();

  it.each(faultCases.map(([name, faults, first]) => ({ name, faults, reason: REASON[version][first] })))('$name → $reason', async ({ faults, reason }) => {
    const { p, payer } = await faulty(version, faults);
    const client = stockClient(version);
    expect(await client.verify(p as never, requirements as never)).toMatchObject({ isValid: false, invalidReason: reason, payer });
    expect(await client.settle(p as never, requirements as never)).toMatchObject({ success: false, errorReason: reason, payer, transaction: '', network: NETWORK[version] });
  });

  it('a settled nonce verifies as invalid_exact_evm_nonce_already_used, naming the payer; settling it again answers its transaction', async () => {
    const { p, payer } = await faulty(version, []);
    const client = stockClient(version);
    const settled = await client.settle(p as never, requirements as never);
    expect(settled).toMatchObject({ success: true, payer, network: NETWORK[version] });
    expect(await client.verify(p as never, requirements as never)).toEqual(expect.objectContaining({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', payer }));
    expect(await client.settle(p as never, requirements as never)).toMatchObject({ success: true, transaction: settled.transaction, network: NETWORK[version] });
  });
});

describe("DESIGN §5 \"Facilitator\": the answers parse with each version's stock schemas", () => {
  it("v1: x402 1.x's VerifyResponseSchema and SettleResponseSchema read the answers; the receipt's network is `base`", async () => {
    const client = stockClient(1);
    const requirements = v1Requirements();
    const { p } = await faulty(1, []);
    expect(VerifyResponseSchema.parse(await client.verify(p as never, requirements as never))).toEqual({ isValid: true, payer: buyer.address.toLowerCase() });
    const receipt = SettleResponseSchema.parse(await client.settle(p as never, requirements as never));
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: buyer.address.toLowerCase() });
    // A reason in x402 1.x's own list; its schema's `transaction` pattern refuses the "" that
    // every v1 facilitator (x402 1.x's own included) answers a refusal with, so it is left out.
    const late = await faulty(1, ['validBefore']);
    expect(VerifyResponseSchema.parse(await client.verify(late.p as never, requirements as never))).toMatchObject({ isValid: false, invalidReason: REASON[1].validBefore, payer: late.payer });
    const refused = SettleResponseSchema.omit({ transaction: true }).parse(await client.settle(late.p as never, requirements as never));
    expect(refused).toMatchObject({ success: false, errorReason: REASON[1].validBefore, network: 'base', payer: late.payer });
  });

  it("v1: a request refused as unsupported still answers the network its payment names (`base`)", async () => {
    const { p } = await faulty(1, []);
    const st = await h.req('POST', '/facilitator/settle', { body: { x402Version: 1, paymentPayload: p, paymentRequirements: { ...v1Requirements(), scheme: 'upto' } } });
    expect(st.json).toMatchObject({ success: false, errorReason: 'unsupported_scheme', network: 'base' });
  });

  it("v2: @x402/core's HTTPFacilitatorClient parses the answers with its schemas; the receipt's network is eip155:8453", async () => {
    const client = stockClient(2);
    const { p, payer } = await faulty(2, ['recipient', 'value']);
    await expect(client.verify(p as never, v2Requirements() as never)).resolves.toMatchObject({ isValid: false, invalidReason: REASON[2].recipient, payer });
    const ok = await faulty(2, []);
    await expect(client.settle(ok.p as never, v2Requirements() as never)).resolves.toMatchObject({ success: true, network: 'eip155:8453', payer });
  });
});
