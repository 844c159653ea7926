import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m } from '@scure/base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NETWORKS, addressFromPublicKey, decodeAddress, encodeAddress, isAddress, networkByChainId, networkByHrp } from './address.ts';
import { AddressError, type AddressErrorCode } from './errors.ts';

const hash32 = fc.uint8Array({ minLength: 32, maxLength: 32 });

function codeOf(fn: () => unknown): AddressErrorCode | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (e) {
    if (e instanceof AddressError) return e.code;
    throw e;
  }
}

describe('address (DESIGN §3: bech32m(hrp, SHA-256(public key)))', () => {
  it('networks: live is chain 1 / anm, test is chain 1001 / tanm', () => {
    expect(NETWORKS).toEqual({ live: { chainId: 1, hrp: 'anm' }, test: { chainId: 1001, hrp: 'tanm' } });
    expect(networkByHrp('tanm')).toBe('test');
    expect(networkByChainId(1)).toBe('live');
    expect(networkByHrp('bc')).toBeUndefined();
  });

  it('derives the address from SHA-256 of the public key', () => {
    const pk = new Uint8Array(1952).fill(7);
    const a = addressFromPublicKey(pk, 'anm');
    expect(a.startsWith('anm1')).toBe(true);
    expect(decodeAddress(a, 'anm').hash).toEqual(sha256(pk));
    expect(codeOf(() => addressFromPublicKey(new Uint8Array(32), 'anm'))).toBe('wrong_length');
  });

  it('round-trips any 32-byte hash on both networks', () => {
    fc.assert(
      fc.property(hash32, fc.constantFrom('anm', 'tanm'), (h, hrp) => {
        const a = encodeAddress(hrp, h);
        const d = decodeAddress(a, hrp);
        expect(d).toEqual({ hrp, hash: h, address: a });
        expect(decodeAddress(a.toUpperCase(), hrp).address).toBe(a);
      }),
    );
  });

  it('refuses the other network with wrong_hrp', () => {
    const a = encodeAddress('tanm', new Uint8Array(32).fill(1));
    expect(codeOf(() => decodeAddress(a, 'anm'))).toBe('wrong_hrp');
    expect(isAddress(a, 'anm')).toBe(false);
    expect(isAddress(a, 'tanm')).toBe(true);
  });

  it('refuses any single-character substitution with bad_checksum', () => {
    fc.assert(
      fc.property(hash32, fc.nat(), fc.nat(), (h, posSeed, charSeed) => {
        const a = encodeAddress('anm', h);
        const pos = 4 + (posSeed % (a.length - 4));
        const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
        const c = charset[charSeed % 32]!;
        fc.pre(c !== a[pos]);
        const bad = a.slice(0, pos) + c + a.slice(pos + 1);
        expect(codeOf(() => decodeAddress(bad, 'anm'))).toBe('bad_checksum');
      }),
    );
  });

  it('refuses a valid bech32m string with a payload that is not 32 bytes', () => {
    const short = bech32m.encode('anm', bech32m.toWords(new Uint8Array(20)));
    const long = bech32m.encode('anm', bech32m.toWords(new Uint8Array(80)), 1023);
    expect(long.length).toBeGreaterThan(90);
    expect(codeOf(() => decodeAddress(short, 'anm'))).toBe('wrong_length');
    expect(codeOf(() => decodeAddress(long, 'anm'))).toBe('wrong_length');
    expect(codeOf(() => encodeAddress('anm', new Uint8Array(31)))).toBe('wrong_length');
  });

  it('refuses malformed strings with bad_format', () => {
    const a = encodeAddress('anm', new Uint8Array(32));
    for (const bad of [42, '', 'anm', 'anmqqqq', '1qqqqqqqq', a.replace('q', 'b'), 'Anm' + a.slice(3), 'x'.repeat(2000)]) {
      expect(codeOf(() => decodeAddress(bad))).toBe('bad_format');
    }
  });
});
