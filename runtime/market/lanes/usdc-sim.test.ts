/**
 * The simulated EIP-3009 ledger's settlement (DESIGN §5 "Facilitator": settlement is
 * idempotent per nonce), on PostgreSQL when reachable: concurrent settles of one
 * authorization move the money once and both answer its transaction; a short balance leaves
 * the nonce unused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded, openReal, realAvailable, type Backend } from '../../../test/helpers/backends.ts';
import { UsdcSimLedger } from './usdc-sim.ts';

const FROM = '0x00000000000000000000000000000000000000b1';
const TO = '0x00000000000000000000000000000000000000c2';
const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const auth = (n: number, value: string) => ({ from: FROM, to: TO, value, validAfter: '0', validBefore: String(2 ** 40), nonce: nonce(n) });

describe('simulated USDC ledger: settlement per nonce', () => {
  let backend: Backend;
  let ledger: UsdcSimLedger;
  beforeAll(async () => {
    backend = realAvailable ? await openReal() : await openEmbedded();
    ledger = new UsdcSimLedger(backend.db);
    await ledger.fund(FROM, 1_000n);
  });
  afterAll(async () => backend.close());

  it('ten concurrent settles of one authorization: one transfer, every answer the same transaction', async () => {
    const before = { from: await ledger.balanceOf(FROM), to: await ledger.balanceOf(TO) };
    const now = Math.floor(Date.now() / 1000);
    const results = await Promise.all(Array.from({ length: 10 }, () => ledger.transferWithAuthorization(auth(1, '100'), now)));
    expect(results.every((r) => r.ok)).toBe(true);
    const txs = new Set(results.map((r) => (r.ok ? r.tx : '')));
    expect(txs.size).toBe(1);
    expect(results.filter((r) => r.ok && !r.replay)).toHaveLength(1);
    expect(await ledger.balanceOf(FROM)).toBe(before.from - 100n);
    expect(await ledger.balanceOf(TO)).toBe(before.to + 100n);
  });

  it('the same nonce for another transfer is refused; a short balance leaves the nonce unused', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await ledger.transferWithAuthorization(auth(1, '101'), now)).toEqual({ ok: false, reason: 'invalid_exact_evm_nonce_already_used' });
    expect(await ledger.transferWithAuthorization(auth(2, '1000000'), now)).toEqual({ ok: false, reason: 'invalid_exact_evm_insufficient_balance' });
    expect(await ledger.authorizationState(FROM, nonce(2))).toBe(false);
    expect((await ledger.transferWithAuthorization(auth(2, '5'), now)).ok).toBe(true);
  });
});
