/**
 * keccak256's backends (the `keccak` package's native addon, `@noble/hashes`: ADR 0095) give the
 * same hash on any input, across the sponge's 136-byte blocks, from any view of a buffer, and
 * again on the reused sponge after a hash of another length.
 */
import fc from 'fast-check';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { expect, it } from 'vitest';
import { hexOf, KECCAK_BACKEND, KECCAK_BACKENDS, keccak256 } from './keccak.ts';

it('hashes natively where a prebuilt binary ships (Linux x64 with glibc, as CI)', () => {
  const glibc = process.platform === 'linux' && process.arch === 'x64' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime !== undefined;
  if (glibc) expect(KECCAK_BACKEND).toBe('native');
});

it('is Keccak-256 as Ethereum uses it (known vectors)', () => {
  expect(hexOf(keccak256(new Uint8Array(0)))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  expect(hexOf(keccak256(utf8ToBytes('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)')))).toBe('7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267');
});

const backends = Object.entries(KECCAK_BACKENDS).filter((e): e is [string, NonNullable<(typeof e)[1]>] => e[1] !== null);

it.each(backends)('%s agrees with @noble/hashes on any bytes, from any view, one hash after another', (_name, hash) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.uint8Array({ maxLength: 600 }), fc.nat({ max: 8 })), { minLength: 1, maxLength: 4 }), (inputs) => {
      for (const [bytes, pad] of inputs) {
        // The same bytes inside a larger buffer: the hash reads the view, not the whole buffer.
        const backing = new Uint8Array(bytes.length + 2 * pad).fill(0xa5);
        backing.set(bytes, pad);
        const view = backing.subarray(pad, pad + bytes.length);
        expect(bytesToHex(hash(view))).toBe(bytesToHex(keccak_256(bytes)));
        expect(bytesToHex(hash(Buffer.from(bytes)))).toBe(bytesToHex(keccak_256(bytes)));
      }
    }),
    { numRuns: 300 },
  );
});
