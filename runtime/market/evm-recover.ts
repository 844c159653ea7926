/**
 * The Ethereum address that signed a 32-byte digest (EIP-712 typed data, EIP-191 message).
 * Two recoveries are the largest share of a purchase's CPU, so the recovery runs in
 * libsecp256k1 natively (the `secp256k1` package's prebuilt N-API addon, ADR 0044) where the
 * addon loads, and in libsecp256k1 compiled to WebAssembly (`tiny-secp256k1`, ADR 0034)
 * where it does not (a platform without a prebuilt binary): the same library, so the same
 * answers, which a property test holds for both.
 *
 * The signature is refused unless it is what the USDC token's `ECRecover` accepts: 65 bytes
 * r ‖ s ‖ v with v 27 or 28, r and s in 1..n-1 and s in the lower half of the order (the
 * high-s twin of a signature is another byte string for the same authorization). Those rules
 * are checked here, not left to a library, so they hold whatever it accepts.
 */
import { createRequire } from 'node:module';
import { recover as wasmRecover } from 'tiny-secp256k1';
import { hexOf, keccak256 } from './keccak.ts';
import { addonPath, RecoveryThread, type Recover } from './recovery-thread.ts';

interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

// `secp256k1/bindings.js` is the addon alone; the package's main entry would fall back to
// `elliptic` in JavaScript, slower than the WebAssembly kept here as the fallback. The recovery
// thread loads the same file.
const ADDON = addonPath(import.meta.url);

function loadNative(): Recover | null {
  if (ADDON === null) return null;
  try {
    const lib = createRequire(import.meta.url)(ADDON) as NativeSecp256k1;
    return (rs, recId, digest) => lib.ecdsaRecover(rs, recId, digest, false);
  } catch {
    return null;
  }
}

const wasm: Recover = (rs, recId, digest) => wasmRecover(digest, rs, recId, false);
const native = loadNative();

/** The recovery backends, for tests that hold them equal. `native` is null where the addon did not load. */
export const RECOVERY_BACKENDS: Readonly<Record<'native' | 'wasm', Recover | null>> = { native, wasm };

/** Which backend `recoverSigner` uses in this process. */
export const RECOVERY_BACKEND: 'native' | 'wasm' = native ? 'native' : 'wasm';

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
/** The order of the secp256k1 group, and its half: a low-s signature has 0 < s <= n/2. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

/**
 * Addresses of recently recovered public keys. A payer signs both legs of a purchase, and an
 * agent buys again and again, so most recoveries give a key seen moments before; its address
 * is a keccak away, which costs several times the look-up. Bounded: emptied when full.
 */
const addresses = new Map<string, string>();
const ADDRESSES_KEPT = 4_096;

function addressOf(key: Uint8Array): string {
  const xy = key.subarray(1);
  const hex = hexOf(xy);
  let address = addresses.get(hex);
  if (address === undefined) {
    address = `0x${hexOf(keccak256(xy).subarray(12))}`;
    if (addresses.size >= ADDRESSES_KEPT) addresses.clear();
    addresses.set(hex, address);
  }
  return address;
}

/**
 * The digest's 32 bytes by Buffer's native decoder, which stops quietly at the first byte that
 * is not hex: what is not 32 bytes of hex throws, as `hexToBytes` did, and has no signer.
 */
function digestBytes(digest: string): Buffer {
  const bytes = Buffer.from(digest.slice(2), 'hex');
  if (digest.length !== 66 || bytes.length !== 32) throw new Error('a digest is 32 bytes of hex');
  return bytes;
}

/** r ‖ s and the recovery id of a signature the token's `ECRecover` accepts, or null. */
function splitSignature(signature: string): { rs: Buffer; recId: 0 | 1 } | null {
  if (!SIGNATURE.test(signature)) return null;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  if (v !== 27 && v !== 28) return null;
  if (r === 0n || r >= N || s === 0n || s > HALF_N) return null;
  return { rs: Buffer.from(signature.slice(2, 130), 'hex'), recId: (v - 27) as 0 | 1 };
}

/** Lower-case `0x` address of the signer, or null for a signature the token would refuse. */
export function recoverSigner(digest: `0x${string}`, signature: string, recover: Recover = native ?? wasm): string | null {
  const sig = splitSignature(signature);
  if (sig === null) return null;
  try {
    const key = recover(sig.rs, sig.recId, digestBytes(digest));
    if (key === null) return null;
    return addressOf(key);
  } catch {
    // No curve point has x = r (or a digest of the wrong length): no signer.
    return null;
  }
}

const thread = new RecoveryThread(native ?? wasm, native ? ADDON : null);

/**
 * `recoverSigner` for the request paths: the same answer, with the recovery on a worker thread
 * while the service is busy (recovery-thread.ts), at once when it is not.
 */
export async function recoverSignerSoon(digest: `0x${string}`, signature: string): Promise<string | null> {
  const sig = splitSignature(signature);
  if (sig === null) return null;
  let bytes: Buffer;
  try {
    bytes = digestBytes(digest);
  } catch {
    return null;
  }
  // Never rejects: a recovery with no key is null on either thread.
  const key = await thread.recover(sig.rs, sig.recId, bytes);
  return key === null ? null : addressOf(key);
}
