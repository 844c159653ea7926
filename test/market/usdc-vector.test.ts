/**
 * The `exact-split` test vector printed in docs/marketplace.md ("Signing both legs with the x402
 * SDK"; issue 20 item 11, the wire format with test vectors): `ExactSplitEvmScheme` run on the
 * vector's key, clock and nonce entropy must sign exactly the legs the page shows. EIP-712
 * signatures by viem are deterministic (RFC 6979), so every byte is compared: each nonce, the
 * EIP-712 digest, the signature and the header value. Each leg also passes the lane's own
 * checks against its requirements at the vector's time.
 */
import { readFileSync } from 'node:fs';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { hashTypedData, keccak256, recoverTypedDataAddress, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ExactSplitEvmScheme } from '../../runtime/market/client/exact-split-evm.ts';
import { checkAuthorization, domainOf, TRANSFER_TYPES, type ExactEvmPayload } from '../../runtime/market/lanes/eip3009.ts';
import type { PaymentRequirements } from '../../runtime/market/requirements.ts';

interface VectorLeg {
  entropy: string;
  nonce: Hex;
  validAfter: string;
  validBefore: string;
  eip712_digest: Hex;
  signature: Hex;
  header: string;
}
interface Vector {
  buyer_private_key: Hex;
  buyer: string;
  now: number;
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  /** The quote's `accepts[0]`. */
  requirements: PaymentRequirements & { extra: { name: string; version: string; intent_id: string; legs: Record<Name, { payTo: string; amount: string }> } };
  seller: VectorLeg;
  fee: VectorLeg;
}
type Name = 'seller' | 'fee';
type Leg = { x402Version: number; accepted: Record<string, unknown>; payload: ExactEvmPayload };

const page = readFileSync(new URL('../../docs/marketplace.md', import.meta.url), 'utf8');
const block = /<!-- vector:exact-split -->\n```json\n([\s\S]*?)\n```/.exec(page);
const v = JSON.parse(block?.[1] ?? 'null') as Vector;
const LEGS = ['seller', 'fee'] as const;
const buyer = privateKeyToAccount(v.buyer_private_key);
const decode = (header: string) => JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as Leg;
const message = (a: ExactEvmPayload['authorization']) => ({ from: a.from as Hex, to: a.to as Hex, nonce: a.nonce as Hex, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore) });

/** The scheme on the vector's clock, with its entropy for the seller leg's nonce, then the fee's. */
async function signed(): Promise<Record<Name, Leg>> {
  const entropy = [v.seller.entropy, v.fee.entropy];
  const scheme = new ExactSplitEvmScheme(buyer, () => v.now * 1000, () => entropy.shift()!);
  const { payload } = await scheme.createPaymentPayload(2, v.requirements);
  return payload.legs as Record<Name, Leg>;
}

describe('docs/marketplace.md exact-split test vector', () => {
  it('the payer and the payees are the keys’ addresses; the domain is the requirements’ token', () => {
    expect(buyer.address).toBe(v.buyer);
    expect(privateKeyToAccount(`0x${'02'.repeat(32)}`).address).toBe(v.requirements.extra.legs.seller.payTo);
    expect(privateKeyToAccount(`0x${'03'.repeat(32)}`).address).toBe(v.requirements.extra.legs.fee.payTo);
    const r = v.requirements;
    expect(domainOf({ name: r.extra.name, version: r.extra.version, chainId: Number(r.network.split(':')[1]), address: r.asset })).toEqual(v.domain);
  });

  it.each(LEGS)('%s leg: nonce, EIP-712 digest, signature by the buyer; it passes the lane’s checks at the vector’s time', async (name) => {
    const l = v[name];
    const leg = decode(l.header);
    const a = leg.payload.authorization;
    expect(l.nonce).toBe(keccak256(toHex(`${v.requirements.extra.intent_id}|${name}|${l.entropy}`)));
    expect(a).toEqual({ from: v.buyer, to: v.requirements.extra.legs[name].payTo, value: v.requirements.extra.legs[name].amount, validAfter: l.validAfter, validBefore: l.validBefore, nonce: l.nonce });
    expect([BigInt(l.validAfter), BigInt(l.validBefore)]).toEqual([BigInt(v.now - 60), BigInt(v.now + v.requirements.maxTimeoutSeconds)]);
    const typed = { domain: v.domain as typeof v.domain & { verifyingContract: Hex }, types: TRANSFER_TYPES, primaryType: 'TransferWithAuthorization', message: message(a) } as const;
    expect(hashTypedData(typed)).toBe(l.eip712_digest);
    expect(await buyer.signTypedData(typed)).toBe(l.signature);
    expect(leg.payload.signature).toBe(l.signature);
    expect(await recoverTypedDataAddress({ ...typed, signature: l.signature })).toBe(v.buyer);
    const expected = { scheme: 'exact', network: v.requirements.network, asset: v.requirements.asset, payTo: a.to, amount: BigInt(a.value) };
    expect(await checkAuthorization(leg.payload, expected, v.now, { ...v.domain, verifyingContract: v.domain.verifyingContract as Hex })).toMatchObject({ ok: true, payer: v.buyer.toLowerCase() });
    expect(leg.accepted).toMatchObject({ scheme: 'exact', network: v.requirements.network, asset: v.requirements.asset, payTo: a.to, amount: a.value, extra: { name: v.domain.name, version: v.domain.version } });
  });

  it('ExactSplitEvmScheme signs the same legs from the requirements: the same header values, byte for byte', async () => {
    const legs = await signed();
    for (const name of LEGS) expect(encodePaymentSignatureHeader(legs[name] as unknown as Parameters<typeof encodePaymentSignatureHeader>[0])).toBe(v[name].header);
  });
});
