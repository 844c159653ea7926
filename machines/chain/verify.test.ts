import { bytesToHex } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { NETWORKS, encodeAddress } from './address.ts';
import type { TxErrorCode } from './errors.ts';
import { merchantLive, merchantTest, other, payer, paymentTx } from './fixtures.test-util.ts';
import { mlDsaSign, nobleVerify } from './mldsa.ts';
import { encodeSignedTxBytes, signTx, signingBytes, verifyTx, type Transaction } from './tx.ts';

const live = NETWORKS.live;
const errorOf = (r: ReturnType<typeof verifyTx>): TxErrorCode | 'ok' => (r.ok ? 'ok' : r.error.code);
/** Signs whatever it is given, so the refusal comes from the rule under test, not the signature. */
const signed = (tx: Transaction) => signTx(tx, payer.secretKey);

describe('verifyTx accepts a well-formed payment', () => {
  it('verifies from an object, bytes and hex alike and returns hash, sender and nonce', () => {
    const s = signed(paymentTx());
    const bytes = encodeSignedTxBytes(s);
    const r = verifyTx(s, live);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.tx.nonce).toBe(7n);
    expect(r.from.startsWith('anm1')).toBe(true);
    expect(r.bytes).toEqual(bytes);
    const fromBytes = verifyTx(bytes, live);
    const fromHex = verifyTx(bytesToHex(bytes), live);
    expect(fromBytes.ok && fromBytes.hash).toBe(r.hash);
    expect(fromHex.ok && fromHex.hash).toBe(r.hash);
  });

  it('signs deterministically without entropy and hedged with it', () => {
    const tx = paymentTx();
    expect(signed(tx).signature).toEqual(signed(tx).signature);
    const hedged = signTx(tx, payer.secretKey, new Uint8Array(32).fill(1));
    expect(hedged.signature).not.toEqual(signed(tx).signature);
    expect(verifyTx(hedged, live).ok).toBe(true);
  });

  it('routes the signature check through the injected verifier', () => {
    const calls: number[] = [];
    const r = verifyTx(signed(paymentTx()), { ...live, verify: (pk, msg, sig, ctx) => (calls.push(msg.length), nobleVerify(pk, msg, sig, ctx)) });
    expect(r.ok).toBe(true);
    expect(calls).toEqual([signingBytes(paymentTx()).length]);
    expect(errorOf(verifyTx(signed(paymentTx()), { ...live, verify: () => false }))).toBe('bad_signature');
  });
});

describe('verifyTx refuses, each with its own error code', () => {
  const cases: [string, Transaction | (() => ReturnType<typeof signed>), TxErrorCode][] = [
    ['test-network tx on the live chain', paymentTx({ chain_id: 1001 }), 'wrong_chain_id'],
    ['an output to a test-network address', paymentTx({ outputs: [{ to: merchantTest, amount: 5n }] }), 'wrong_hrp'],
    ['an output to a foreign hrp', paymentTx({ outputs: [{ to: encodeAddress('bc', new Uint8Array(32)), amount: 5n }] }), 'wrong_hrp'],
    ['an output address in upper case', paymentTx({ outputs: [{ to: merchantLive.toUpperCase(), amount: 5n }] }), 'bad_address'],
    ['an output that is not an address', paymentTx({ outputs: [{ to: 'anm1qqqq', amount: 5n }] }), 'bad_address'],
    ['zero outputs', paymentTx({ outputs: [] }), 'no_outputs'],
    ['257 outputs', paymentTx({ outputs: Array.from({ length: 257 }, () => ({ to: merchantLive, amount: 1n })) }), 'too_many_outputs'],
    ['a zero-amount output', paymentTx({ outputs: [{ to: merchantLive, amount: 0n }] }), 'amount_out_of_range'],
    ['outputs + fee above 2^64-1', paymentTx({ fee: 2n ** 63n, outputs: [{ to: merchantLive, amount: 2n ** 63n }] }), 'amount_out_of_range'],
    ['a 65-character reference', paymentTx({ reference: 'x'.repeat(65) }), 'bad_reference'],
    ['a public key of the wrong length', () => ({ ...signed(paymentTx()), from_public_key: new Uint8Array(1951) }), 'bad_public_key'],
    ['a signature by another key', () => ({ ...signTx(paymentTx(), other.secretKey) }), 'bad_signature'],
    ['a signature without the ANM-TX-v1 context', () => ({ ...paymentTx(), signature: mlDsaSign(signingBytes(paymentTx()), payer.secretKey, new Uint8Array(0)) }), 'bad_signature'],
    ['a signature over the bytes with another context', () => ({ ...paymentTx(), signature: mlDsaSign(signingBytes(paymentTx()), payer.secretKey, new TextEncoder().encode('ANM-MSG-v1')) }), 'bad_signature'],
    ['a truncated signature', () => { const s = signed(paymentTx()); return { ...s, signature: s.signature.subarray(1) }; }, 'bad_signature'],
  ];
  it.each(cases)('%s', (_name, make, code) => {
    const s = typeof make === 'function' ? make() : signed(make);
    const r = verifyTx(s, live);
    expect(errorOf(r)).toBe(code);
    if (!r.ok) expect(r.error.message.length).toBeGreaterThan(0);
  });

  it('refuses a live-signed tx on the test network (chain id) and unparseable input (malformed)', () => {
    expect(errorOf(verifyTx(signed(paymentTx()), NETWORKS.test))).toBe('wrong_chain_id');
    expect(errorOf(verifyTx('zz', live))).toBe('malformed');
    expect(errorOf(verifyTx(new Uint8Array(3), live))).toBe('malformed');
    expect(errorOf(verifyTx({ ...paymentTx({ fee: -1n }), signature: new Uint8Array() }, live))).toBe('amount_out_of_range');
  });
});

describe('every tampered byte is refused (region by region)', () => {
  const s = signed(paymentTx());
  const bytes = encodeSignedTxBytes(s);
  const pk = s.from_public_key.length;
  // Offsets follow docs/chain.md.
  const regions: { name: string; start: number; end: number; stride: number; codes: TxErrorCode[] | 'any' }[] = [];
  let off = 0;
  const add = (name: string, len: number, codes: TxErrorCode[] | 'any', stride = 1) => {
    regions.push({ name, start: off, end: off + len, stride, codes });
    off += len;
  };
  add('magic', 9, ['malformed']);
  add('chain_id', 4, ['wrong_chain_id']);
  add('public key length', 2, 'any');
  add('public key', pk, ['bad_signature'], 7);
  add('nonce', 8, ['bad_signature']);
  add('output count', 2, 'any');
  for (const [i, o] of s.outputs.entries()) {
    add(`outputs[${i}] address length`, 1, 'any');
    add(`outputs[${i}].to`, o.to.length, ['bad_address', 'malformed']);
    add(`outputs[${i}].amount`, 8, ['bad_signature', 'amount_out_of_range']);
  }
  add('reference length', 1, 'any');
  add('reference', s.reference.length, ['bad_signature', 'malformed']);
  add('fee', 8, ['bad_signature', 'amount_out_of_range']);
  add('signature length', 2, ['malformed']);
  add('signature', s.signature.length, ['bad_signature'], 7);

  it('covers the whole signed transaction', () => {
    expect(off).toBe(bytes.length);
  });

  it.each(regions)('$name', ({ start, end, stride, codes }) => {
    const positions = new Set<number>();
    for (let i = start; i < end; i += stride) positions.add(i);
    positions.add(end - 1);
    for (const i of positions) {
      for (const mask of stride === 1 ? [0x01, 0x80] : [0x01]) {
        const t = bytes.slice();
        t[i]! ^= mask;
        const code = errorOf(verifyTx(t, live));
        expect(code, `byte ${i} ^ ${mask}`).not.toBe('ok');
        if (codes !== 'any') expect(codes, `byte ${i} ^ ${mask} gave ${code}`).toContain(code);
      }
    }
  });
});
