/**
 * bench:market's raw EIP-712 verify rate on one signed leg, in the bench's own process: ours
 * (the hand-encoded digest and libsecp256k1's recovery, ADR 0034/0044) and viem's
 * `recoverTypedDataAddress`, each per wall second and per CPU second, so that a purchase's
 * rate can be set against the two verifications it makes.
 */
import { getAddress, recoverTypedDataAddress } from 'viem';
import { checkAuthorization, TRANSFER_TYPES, USDC_DOMAIN, USDC_EXPECTED_BASE } from '../../runtime/market/lanes/eip3009.ts';
import type { signLeg } from '../fixtures/market.ts';
import { drive } from './stats.ts';

export interface RawRate {
  wall: number;
  perCpuS: number;
}

type Leg = Awaited<ReturnType<typeof signLeg>>;

async function rawRate(n: number, f: () => Promise<unknown>): Promise<RawRate> {
  const c0 = process.cpuUsage();
  const r = await drive(n, 1, f);
  const c = process.cpuUsage(c0);
  return { wall: r.rate, perCpuS: n / ((c.user + c.system) / 1e6) };
}

/** Both rates over at most `ops` verifications (viem's over at most 500: it is slower); NaN without a leg. */
export async function rawVerifyRates(leg: Leg | undefined, ops: number): Promise<{ ours: RawRate; viem: RawRate }> {
  if (!leg) return { ours: { wall: NaN, perCpuS: NaN }, viem: { wall: NaN, perCpuS: NaN } };
  const expected = { ...USDC_EXPECTED_BASE, payTo: leg.accepted.payTo, amount: BigInt(leg.accepted.amount) };
  const ours = await rawRate(Math.min(ops, 2_000), () => checkAuthorization(leg.payload, expected, Math.floor(Date.now() / 1000)));
  const a = leg.payload.authorization;
  const viem = await rawRate(Math.min(ops, 500), () =>
    recoverTypedDataAddress({
      domain: USDC_DOMAIN,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { from: getAddress(a.from), to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce },
      signature: leg.payload.signature,
    }),
  );
  return { ours, viem };
}
