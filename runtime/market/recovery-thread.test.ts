/**
 * The recovery thread (ADR 0104): the thread's keys are the main thread's, byte for byte, for
 * any digest and r ‖ s, including those with no key; idle recoveries never start it; a thread
 * that cannot run hands its batch back to the main thread.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { afterEach, expect, it } from 'vitest';
import { RECOVERY_BACKENDS, recoverSigner, recoverSignerSoon } from './evm-recover.ts';
import { addonPath, RecoveryThread, type Recover } from './recovery-thread.ts';

const native = RECOVERY_BACKENDS.native;
const addon = addonPath(import.meta.url);
const inline: Recover = native ?? RECOVERY_BACKENDS.wasm!;
/** The main thread's answer, with a recovery that throws (r with no point) read as none. */
const reference = (rs: Uint8Array, recId: 0 | 1, digest: Uint8Array): Uint8Array | null => {
  try {
    return inline(rs, recId, digest);
  } catch {
    return null;
  }
};

const threads: RecoveryThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.close()));
});
const open = (...a: ConstructorParameters<typeof RecoveryThread>): RecoveryThread => {
  const t = new RecoveryThread(...a);
  threads.push(t);
  return t;
};
const signed = (n: number): Array<{ rs: Uint8Array; recId: 0 | 1; digest: Uint8Array }> =>
  Array.from({ length: n }, (_, i) => {
    const digest = secp256k1.utils.randomSecretKey();
    const sig = secp256k1.sign(digest, secp256k1.utils.randomSecretKey(), { prehash: false, format: 'recovered' });
    return { rs: sig.subarray(1), recId: (sig[0]! & 1) as 0 | 1, digest: i % 5 === 4 ? new Uint8Array(32).fill(i) : digest };
  });

it.skipIf(!native || !addon)('gives the main thread\'s keys for any digest and r ‖ s, a batch at a time', async () => {
  // busyAt 0: every recovery goes to the thread.
  const t = open(inline, addon, 0);
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ rs: fc.uint8Array({ minLength: 64, maxLength: 64 }), recId: fc.constantFrom(0 as const, 1 as const), digest: fc.uint8Array({ minLength: 32, maxLength: 32 }) }), { minLength: 1, maxLength: 20 }),
      async (items) => {
        const all = [...items, ...signed(3)];
        const keys = await Promise.all(all.map((x) => t.recover(x.rs, x.recId, x.digest)));
        keys.forEach((k, i) => expect(k).toEqual(reference(all[i]!.rs, all[i]!.recId, all[i]!.digest)));
      },
    ),
    { numRuns: 30 },
  );
  // Real signatures give keys, through the thread.
  const real = signed(8);
  const keys = await Promise.all(real.map((x) => t.recover(x.rs, x.recId, x.digest)));
  expect(keys.every((k) => k !== null && k.length === 65 && k[0] === 4)).toBe(true);
});

it('runs at once while idle: a recovery after a turn that asked for none never reaches a thread', async () => {
  let calls = 0;
  const counting: Recover = (...a) => (calls++, inline(...a));
  // An addon path that cannot load: were the thread started, its batch would come back inline later.
  // The loop's reading off (utilization never reaches 2): the turns alone decide here.
  const t = open(counting, '/nonexistent/addon.node', 1, 2);
  for (const x of signed(5)) {
    const before = calls;
    const key = t.recover(x.rs, x.recId, x.digest);
    expect(calls).toBe(before + 1);
    expect(await key).toEqual(reference(x.rs, x.recId, x.digest));
    // The turn that asked, then a quiet one: idle again.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  }
});

it.skipIf(!native || !addon)('by default a turn that asked for one recovery is busy: the next turn\'s go to the thread', async () => {
  let calls = 0;
  const counting: Recover = (...a) => (calls++, inline(...a));
  const t = open(counting, addon, undefined, 2);
  const [a, b] = signed(2);
  expect(await t.recover(a!.rs, a!.recId, a!.digest)).toEqual(reference(a!.rs, a!.recId, a!.digest));
  expect(calls).toBe(1);
  await new Promise((r) => setImmediate(r));
  expect(await t.recover(b!.rs, b!.recId, b!.digest)).toEqual(reference(b!.rs, b!.recId, b!.digest));
  expect(calls).toBe(1);
});

it('answers a batch on the main thread when the thread cannot run, and keeps answering', async () => {
  const t = open(inline, '/nonexistent/addon.node', 0);
  const items = signed(6);
  const keys = await Promise.all(items.map((x) => t.recover(x.rs, x.recId, x.digest)));
  keys.forEach((k, i) => expect(k).toEqual(reference(items[i]!.rs, items[i]!.recId, items[i]!.digest)));
  const again = await Promise.all(items.map((x) => t.recover(x.rs, x.recId, x.digest)));
  expect(again).toEqual(keys);
});

it.skipIf(!native || !addon)('a busy turn sends the next turn\'s recoveries to the thread, and closing hands any out back', async () => {
  let calls = 0;
  const counting: Recover = (...a) => (calls++, inline(...a));
  const t = open(counting, addon, 3, 2);
  const first = signed(4);
  await Promise.all(first.map((x) => t.recover(x.rs, x.recId, x.digest)));
  expect(calls).toBe(4);
  // The turn ends in the check phase; the next requests come in a later one.
  await new Promise((r) => setImmediate(r));
  const next = signed(4);
  const keys = await Promise.all(next.map((x) => t.recover(x.rs, x.recId, x.digest)));
  expect(calls).toBe(4);
  keys.forEach((k, i) => expect(k).toEqual(reference(next[i]!.rs, next[i]!.recId, next[i]!.digest)));
  // Queued, then sent in the check phase (the thread's immediate runs before this one), then closed while out.
  const pending = next.map((x) => t.recover(x.rs, x.recId, x.digest));
  await new Promise((r) => setImmediate(r));
  await t.close();
  expect(await Promise.all(pending)).toEqual(keys);
});

it.skipIf(!native || !addon)('a lone recovery after a busy spell runs at once: the spell is not the last turn for long', async () => {
  let calls = 0;
  const counting: Recover = (...a) => (calls++, inline(...a));
  const t = open(counting, addon, 3, 2);
  await Promise.all(signed(5).map((x) => t.recover(x.rs, x.recId, x.digest)));
  await new Promise((r) => setImmediate(r));
  // The next turn asks for 5 again: busy, to the thread.
  await Promise.all(signed(5).map((x) => t.recover(x.rs, x.recId, x.digest)));
  expect(calls).toBe(5);
  // Two quiet turns later, one recovery: at once.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const [x] = signed(1);
  void t.recover(x!.rs, x!.recId, x!.digest);
  expect(calls).toBe(6);
});

it.skipIf(!native || !addon)('a loop with no room sends recoveries to the thread though the last turn asked for none, an idle one runs them at once', async () => {
  let calls = 0;
  const counting: Recover = (...a) => (calls++, inline(...a));
  // The turns' reading off: no turn asks for 1,000.
  const t = open(counting, addon, 1_000, 0.9);
  const [a, b] = signed(2);
  const spinUntil = performance.now() + 40;
  while (performance.now() < spinUntil);
  expect(await t.recover(a!.rs, a!.recId, a!.digest)).toEqual(reference(a!.rs, a!.recId, a!.digest));
  expect(calls).toBe(0);
  await new Promise((r) => setTimeout(r, 100));
  expect(await t.recover(b!.rs, b!.recId, b!.digest)).toEqual(reference(b!.rs, b!.recId, b!.digest));
  expect(calls).toBe(1);
});

it('answers none, as the thread does, where the main thread\'s recovery throws', async () => {
  const throwing: Recover = () => {
    throw new Error('no point with x = r');
  };
  const t = open(throwing, null);
  const [x] = signed(1);
  await expect(t.recover(x!.rs, x!.recId, x!.digest)).resolves.toBeNull();
});

it('recoverSignerSoon answers as recoverSigner', async () => {
  const digest = `0x${'07'.repeat(32)}` as const;
  const sig = secp256k1.sign(new Uint8Array(32).fill(7), secp256k1.utils.randomSecretKey(), { prehash: false, format: 'recovered' });
  const good = `0x${Buffer.from(sig.subarray(1)).toString('hex')}${(27 + sig[0]!).toString(16)}`;
  for (const s of [good, `${good.slice(0, -2)}1d`, 'not hex', `0x${'00'.repeat(65)}`]) {
    expect(await recoverSignerSoon(digest, s)).toBe(recoverSigner(digest, s));
  }
  expect(await recoverSignerSoon('0x12', good)).toBeNull();
});

it.skipIf(!native || !addon)('a process whose last recovery went to the thread ends with it answered', async () => {
  const here = import.meta.dirname;
  const script = `
    import { RecoveryThread, addonPath } from ${JSON.stringify(path.join(here, 'recovery-thread.ts'))};
    import { RECOVERY_BACKENDS } from ${JSON.stringify(path.join(here, 'evm-recover.ts'))};
    const t = new RecoveryThread(RECOVERY_BACKENDS.native, addonPath(${JSON.stringify(path.join(here, 'x.ts'))}), 0);
    const key = await t.recover(new Uint8Array(64).fill(1), 0, new Uint8Array(32).fill(2));
    console.log('KEY ' + (key === null ? 'none' : key.length));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
  expect(stdout.trim()).toBe('KEY 65');
});
