/**
 * Keccak-256 for the purchase path's digests (each USDC leg's EIP-712 digest is two hashes, a
 * recovered key's address one more). In JavaScript (`@noble/hashes`) the two hashes of a
 * digest cost about as much as a third of the leg's signature recovery, so they run in XKCP
 * natively: the `keccak` package's prebuilt N-API addon (ADR 0095), loaded alone through
 * `node-gyp-build` as `secp256k1`'s is (ADR 0044). The package's own API wraps every hash in a
 * stream object, which costs more than the hash; one sponge is reused instead, which is safe
 * because a hash runs to its end synchronously. Where the addon does not load (a platform
 * without a prebuilt binary), `@noble/hashes` answers: the same function, which a property test
 * holds for both.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';

type Keccak256 = (data: Uint8Array) => Uint8Array;

/** The addon's sponge (XKCP's `KeccakWidth1600_Sponge*`). */
interface Sponge {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  squeeze(bytes: number): Buffer;
}

function loadNative(): Keccak256 | null {
  try {
    // `node-gyp-build` as the package itself requires it (its dependency), for its directory.
    const pkg = createRequire(import.meta.url).resolve('keccak/package.json');
    const Sponge = (createRequire(pkg)('node-gyp-build') as (dir: string) => unknown)(dirname(pkg));
    // Bun and other runtimes without N-API hand back an empty object rather than the class.
    if (typeof Sponge !== 'function') return null;
    const sponge = new (Sponge as new () => Sponge)();
    return (data) => {
      // Keccak-256: rate 1088 bits, capacity 512; squeezing pads with Keccak's own 0x01 suffix.
      sponge.initialize(1088, 512);
      sponge.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      return sponge.squeeze(32);
    };
  } catch {
    return null;
  }
}

const noble: Keccak256 = (data) => keccak_256(data);
const native = loadNative();

/** The hash backends, for tests that hold them equal. `native` is null where the addon did not load. */
export const KECCAK_BACKENDS: Readonly<Record<'native' | 'noble', Keccak256 | null>> = { native, noble };

/** Which backend `keccak256` uses in this process. */
export const KECCAK_BACKEND: 'native' | 'noble' = native ? 'native' : 'noble';

/** Keccak-256 of `data` (Ethereum's, not SHA3-256). The result may be a Buffer. */
export const keccak256: Keccak256 = native ?? noble;

/** Lower-case hex of `bytes` (no `0x`), through Buffer's native encoder and without a copy. */
export function hexOf(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('hex');
}
