/**
 * The simulated EIP-3009 ledger's settlement (DESIGN §5 "Facilitator": settlement is
 * idempotent per nonce), on PostgreSQL when reachable and on PGlite: concurrent settles of one
 * authorization move the money once and both answer its transaction; a short balance leaves
 * the nonce unused, also when concurrent settles of one payer overdraw it together.
 */
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFactories, openReal, realAvailable, type Backend } from '../../../test/helpers/backends.ts';
import { UsdcSimLedger } from './usdc-sim.ts';

const FROM = '0x00000000000000000000000000000000000000b1';
const TO = '0x00000000000000000000000000000000000000c2';
const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const auth = (n: number, value: string) => ({ from: FROM, to: TO, value, validAfter: '0', validBefore: String(2 ** 40), nonce: nonce(n) });

describe.each(backendFactories)('simulated USDC ledger: settlement per nonce (%s)', (_name, open) => {
  let backend: Backend;
  let ledger: UsdcSimLedger;
  beforeAll(async () => {
    backend = await open();
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

  it('concurrent settles of one payer past its balance: exactly those it covers move money, the others leave their nonces unused', async () => {
    const payer = '0x00000000000000000000000000000000000000b3';
    await ledger.fund(payer, 350n);
    const now = Math.floor(Date.now() / 1000);
    const one = (n: number) => ({ from: payer, to: TO, value: '100', validAfter: '0', validBefore: String(2 ** 40), nonce: nonce(100 + n) });
    const to0 = await ledger.balanceOf(TO);
    const results = await Promise.all(Array.from({ length: 6 }, (_, n) => ledger.transferWithAuthorization(one(n), now)));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(Array(3).fill('invalid_exact_evm_insufficient_balance'));
    expect(await ledger.balanceOf(payer)).toBe(50n);
    expect((await ledger.balanceOf(TO)) - to0).toBe(300n);
    const used = await Promise.all(Array.from({ length: 6 }, (_, n) => ledger.authorizationState(payer, nonce(100 + n))));
    expect(used.map((u, n) => u === results[n]!.ok)).toEqual(Array(6).fill(true));
  });

  // On PGlite (one connection) statements never overlap; the deadlock it guards against needs PostgreSQL.
  it('two addresses paying each other at once: no deadlock, every transfer moves (rows locked in address order)', async () => {
    const [x, y] = ['0x00000000000000000000000000000000000000d4', '0x00000000000000000000000000000000000000d5'];
    await ledger.fund(x, 1_000n);
    await ledger.fund(y, 1_000n);
    const now = Math.floor(Date.now() / 1000);
    const pay = (from: string, to: string, n: number) => ({ from, to, value: '1', validAfter: '0', validBefore: String(2 ** 40), nonce: nonce(500 + n) });
    const results = await Promise.all(Array.from({ length: 60 }, (_, n) => (n % 2 ? ledger.transferWithAuthorization(pay(x, y, n), now) : ledger.transferWithAuthorization(pay(y, x, n), now))));
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect([await ledger.balanceOf(x), await ledger.balanceOf(y)]).toEqual([1_000n, 1_000n]);
  });

  it('a payer with no balance at all, and a transfer to oneself (the nonce used, the balance kept)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = '0x00000000000000000000000000000000000000b4';
    expect(await ledger.transferWithAuthorization({ ...auth(3, '1'), from: stranger }, now)).toEqual({ ok: false, reason: 'invalid_exact_evm_insufficient_balance' });
    const before = await ledger.balanceOf(FROM);
    const self = { ...auth(4, '7'), to: FROM };
    const first = await ledger.transferWithAuthorization(self, now);
    expect(first).toMatchObject({ ok: true, replay: false });
    expect(await ledger.transferWithAuthorization(self, now)).toEqual({ ...first, replay: true });
    expect(await ledger.balanceOf(FROM)).toBe(before);
    expect(await ledger.authorizationState(FROM, nonce(4))).toBe(true);
  });

  it('reads used nonces and balances in the order asked, one leg or two', async () => {
    expect(await ledger.authorizationStates([{ authorizer: FROM, nonce: nonce(1) }])).toEqual([{ used: true, balance: await ledger.balanceOf(FROM) }]);
    expect(await ledger.authorizationStates([{ authorizer: TO, nonce: nonce(9) }, { authorizer: FROM.toUpperCase().replace('0X', '0x'), nonce: nonce(1) }])).toEqual([
      { used: false, balance: await ledger.balanceOf(TO) },
      { used: true, balance: await ledger.balanceOf(FROM) },
    ]);
  });
});

describe.runIf(realAvailable)('simulated USDC ledger: the purchase read on PostgreSQL', () => {
  it('keeps a generic plan: not planned again on every purchase (ADR 0044)', async () => {
    const one = await openReal({ poolSize: 1 });
    try {
      const l = new UsdcSimLedger(one.db);
      for (let i = 0; i < 8; i++) await l.authorizationStates([{ authorizer: FROM, nonce: nonce(i) }, { authorizer: TO, nonce: nonce(i) }]);
      const { rows } = await one.db.query<{ generic_plans: string; custom_plans: string }>(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE $1`, ['%FROM usdc_authorizations u%']);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.generic_plans)).toBeGreaterThan(0);
    } finally {
      await one.close();
    }
  });
});

describe('simulated USDC ledger: transaction ids', () => {
  it('a settlement names the transaction keccak-256("usdc-sim:<from>:<nonce>") of its lower-case payer and nonce, as recorded settlements do', () => {
    const ledger = new UsdcSimLedger(null as never);
    const a = { from: '0x00000000000000000000000000000000000000B1', to: TO, value: '5', validAfter: '0', validBefore: String(2 ** 40), nonce: `0x${'Ab'.repeat(32)}` };
    const want = `0x${bytesToHex(keccak_256(utf8ToBytes(`usdc-sim:${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`)))}`;
    expect(ledger.settlementCompanion(a, 0)?.tx).toBe(want);
    expect(ledger.settlementCompanion({ ...a, nonce: nonce(7) }, 0)?.tx).toBe(`0x${bytesToHex(keccak_256(utf8ToBytes(`usdc-sim:${a.from.toLowerCase()}:${nonce(7)}`)))}`);
  });
});
