/**
 * Credentials of merchants: API keys (shown once, stored as HMAC-SHA256 under a server
 * pepper), dashboard passwords (scrypt) and random ids. DESIGN §4 "Keys", "Dashboard".
 */
import { createHmac, randomBytes, randomFillSync, randomInt, scrypt as scryptCb, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { base32nopad } from '@scure/base';

export type Mode = 'live' | 'test';
export type KeyKind = 'secret' | 'publishable';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_RANDOM_LENGTH = 32;
/** Spec Authentication 2: prefix + 32 characters of random output. */
export const KEY_PATTERN = /^(ask|apk)_(live|test)_[A-Za-z0-9]{32}$/;

export function keyPrefix(kind: KeyKind, mode: Mode): string {
  return `${kind === 'secret' ? 'ask' : 'apk'}_${mode}_`;
}

/** 32 base62 characters from the CSPRNG (rejection-free: randomInt is uniform). */
function base62(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += BASE62[randomInt(BASE62.length)];
  return s;
}

export function generateApiKey(kind: KeyKind, mode: Mode): string {
  return keyPrefix(kind, mode) + base62(KEY_RANDOM_LENGTH);
}

/** What a well-formed key says about itself; undefined for anything else. */
export function parseApiKey(key: string): { kind: KeyKind; mode: Mode } | undefined {
  const m = KEY_PATTERN.exec(key);
  if (!m) return undefined;
  return { kind: m[1] === 'ask' ? 'secret' : 'publishable', mode: m[2] as Mode };
}

/** The stored form of a key: hex HMAC-SHA256 under the pepper. */
export function hashApiKey(pepper: Buffer, key: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

/**
 * `hashApiKey` for offered keys: every request of a key hashes the same string, and a keyed
 * hash costs a few microseconds of a create's budget. At most `max` keys are kept, the oldest
 * dropped first, so random keys offered by the thousand only cost their own hash. Revoking a
 * key changes nothing here: the hash is looked up in the store on every request.
 */
export class ApiKeyHashes {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly pepper: Buffer,
    private readonly max = 10_000,
  ) {}

  hash(key: string): string {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const h = hashApiKey(this.pepper, key);
    if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, h);
    return h;
  }
}

/** Display prefix kept beside the hash, e.g. `ask_test_Ab3x…`. */
export function displayPrefix(key: string): string {
  return key.slice(0, key.lastIndexOf('_') + 5);
}

// Random bytes drawn from the CSPRNG in blocks, as crypto.randomUUID does: one call into the
// CSPRNG per 256 ids instead of one per id (a call costs ~5 µs, and every request draws an id).
// Every byte is still used once.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolAt = POOL_SIZE;

/** `n` random bytes from the pool: a view, valid until the next draw (copy to keep). */
export function poolBytes(n: number): Uint8Array {
  if (n > POOL_SIZE) return randomBytes(n);
  if (poolAt + n > POOL_SIZE) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += n;
  return pool.subarray(poolAt - n, poolAt);
}

/** Lowercase base32 of `bytes` random bytes: 15 bytes → 24 characters. */
export function randomId(prefix: string, bytes = 15): string {
  return prefix + base32nopad.encode(poolBytes(bytes)).toLowerCase();
}

/** A keyed, deterministic id: same inputs, same id; unguessable without the pepper. */
export function keyedId(prefix: string, pepper: Buffer, parts: readonly string[], bytes = 15): string {
  const mac = createHmac('sha256', pepper).update(JSON.stringify(parts)).digest();
  return prefix + base32nopad.encode(mac.subarray(0, bytes)).toLowerCase();
}

/**
 * The pepper: ANMPAY_KEY_PEPPER, else `<data dir>/key-pepper`, created once. Every gateway
 * process that shares a database must share the pepper (set the variable when scaling out).
 */
export async function loadPepper(dataDir: string, fromEnv?: string): Promise<Buffer> {
  if (fromEnv) return Buffer.from(fromEnv, 'utf8');
  const file = path.join(dataDir, 'key-pepper');
  try {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  } catch {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  }
}

const scrypt = (pw: BinaryLike, salt: BinaryLike, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))));

const SCRYPT = { N: 16384, r: 8, p: 1 };

/** `scrypt$N$r$p$salt$hash`, base64 parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const want = Buffer.from(hash, 'base64');
  const got = await scrypt(password, Buffer.from(salt, 'base64'), want.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(got, want);
}

/** A dashboard password to hand out once: 20 base62 characters (~119 bits). */
export function generatePassword(): string {
  return base62(20);
}
