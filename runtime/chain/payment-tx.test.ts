/** Payment and refund transaction building (DESIGN §3 "A payment", §4 `unsigned_transfer`; issue 4 item 7 `--amount-nanm`). */
import { bytesToHex } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { signingBytes, type Transaction } from '../../machines/chain/index.ts';
import { seededWallet } from './devnet/fixtures.test-util.ts';
import { PaymentBuildError, buildPaymentTx, buildRefundTx, paymentDocSchema, paymentOutputs, unsignedTransferSchema } from './payment-tx.ts';

const merchant = seededWallet(31);
const treasury = seededWallet(32);
const payer = seededWallet(33);
const doc = paymentDocSchema.parse({
  id: 'pi_1',
  status: 'AWAITING_PAYMENT',
  network: 'test',
  payment_address: merchant.address,
  treasury_address: treasury.address,
  merchant_amount: '980000000',
  protocol_fee: '20000000',
  anm_amount: '1000000000',
  payment_reference: 'pr1:aaaqeayeaudaocajbifqydiob4ibceqt',
  expires_at: '2030-01-01T00:00:00Z',
});

describe('payment transaction', () => {
  it('pays merchant_amount to payment_address and protocol_fee to treasury with the reference', () => {
    const tx = buildPaymentTx(doc, { chainId: 1001, publicKey: payer.publicKey, nonce: 4n });
    expect(tx).toMatchObject({
      chain_id: 1001,
      nonce: 4n,
      fee: 0n,
      reference: doc.payment_reference,
      outputs: [
        { to: merchant.address, amount: 980_000_000n },
        { to: treasury.address, amount: 20_000_000n },
      ],
    });
  });

  it('scales both legs to another total: fee leg rounded down, merchant leg takes the rest', () => {
    const legs = (total: bigint) => paymentOutputs(doc, total).map((o) => o.amount);
    expect(legs(500_000_000n)).toEqual([490_000_000n, 10_000_000n]);
    expect(legs(1_500_000_001n)).toEqual([1_470_000_001n, 30_000_000n]);
    expect(legs(49n)).toEqual([49n]); // the fee leg rounds to 0 and is left out
    expect(() => paymentOutputs(doc, 0n)).toThrow(PaymentBuildError);
    for (const total of [1n, 7n, 999_999_999n, 10n ** 18n]) expect(legs(total).reduce((a, b) => a + b, 0n)).toBe(total);
  });
});

describe('refund transaction', () => {
  const base = { chain_id: 1001, from: merchant.address, to: payer.address, amount: '250', reference: 'rf1:aaaqeayeaudaocajbifqydiob4ibceqt', nonce_hint: 0 };
  const payloadFor = (tx: Partial<Transaction>): string =>
    bytesToHex(signingBytes({ chain_id: 1001, from_public_key: merchant.publicKey, nonce: 0n, outputs: [{ to: payer.address, amount: 250n }], reference: base.reference, fee: 5n, ...tx }));

  it('signs the unsigned transfer with the node nonce and takes the fee from the signing payload', () => {
    const u = unsignedTransferSchema.parse({ ...base, signing_payload: payloadFor({}) });
    const tx = buildRefundTx(u, { chainId: 1001, publicKey: merchant.publicKey, nonce: 3n });
    expect(tx).toMatchObject({ nonce: 3n, fee: 5n, reference: base.reference, outputs: [{ to: payer.address, amount: 250n }] });
    expect(buildRefundTx(unsignedTransferSchema.parse(base), { chainId: 1001, publicKey: merchant.publicKey, nonce: 0n }).fee).toBe(0n);
  });

  it('refuses a payload that says something else, another key, or another chain', () => {
    const signer = { chainId: 1001, publicKey: merchant.publicKey, nonce: 0n };
    const code = (u: unknown, s = signer): string => {
      try {
        buildRefundTx(unsignedTransferSchema.parse(u), s);
      } catch (e) {
        return (e as PaymentBuildError).code;
      }
      return 'ok';
    };
    expect(code({ ...base, signing_payload: payloadFor({ outputs: [{ to: payer.address, amount: 251n }] }) })).toBe('inconsistent_transfer');
    expect(code({ ...base, signing_payload: payloadFor({ from_public_key: payer.publicKey }) })).toBe('wrong_wallet');
    expect(code(base, { ...signer, chainId: 1 })).toBe('wrong_chain_id');
    expect(code({ ...base, signing_payload: 'not hex' })).toBe('ok');
  });
});
