/**
 * `npm run bench:verify`: ML-DSA-65 verifications per second on one thread (so per core) for
 * noble and for the WebAssembly backend (PQClean ML-DSA-65 clean, runtime/chain/codec/
 * mldsa65-wasm/), on the signing bytes of a two-output payment (2,164 bytes, ctx ANM-TX-v1),
 * and for verifyTransaction (decode + checks + verify) with each. Rounds alternate between
 * the backends so that load from other processes hits both alike; the table gives the median
 * and the range over the rounds, per second of CPU time (one core's rate) and of wall time. Issue 4's target: >= 2,000 verifies/s per core.
 * Env: BENCH_ROUNDS (default 5), BENCH_SECONDS per round and backend (default 2).
 */
import os from 'node:os';
import {
  NETWORKS,
  TX_SIGNATURE_CONTEXT,
  addressFromPublicKey,
  keypairFromSeed,
  nobleVerify,
  paymentReference,
  signTx,
  signingBytes,
  verifyTx,
  type SignatureVerifier,
  type Transaction,
} from '../../machines/chain/index.ts';
import { WASM_BACKEND_NAME, createWasmVerifier, loadWasmVerifier } from '../../runtime/chain/codec/mldsa65-wasm/loader.ts';
import { verifyBackendName } from '../../runtime/chain/codec/verify.ts';
import { fmt } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

const payer = keypairFromSeed(new Uint8Array(32));
const to = addressFromPublicKey(keypairFromSeed(new Uint8Array(32).fill(1)).publicKey, NETWORKS.live.hrp);
const tx: Transaction = {
  chain_id: 1,
  from_public_key: payer.publicKey,
  nonce: 1n,
  outputs: [{ to, amount: 980_000_000n }, { to, amount: 20_000_000n }],
  reference: paymentReference(new Uint8Array(20)),
  fee: 1000n,
};
const signed = signTx(tx, payer.secretKey);
const msg = signingBytes(tx);

/**
 * Calls of `fn` per second of wall time and per second of this process's CPU time (user +
 * system, all its threads), after a warm-up; throws if a call gives false. On a machine shared
 * with other work the wall-clock rate is what this process got; the CPU-time rate is what one
 * core does (slightly low: V8's helper threads count too).
 */
function rate(fn: () => boolean, seconds: number): { wall: number; cpu: number } {
  for (let i = 0; i < 20; i++) if (!fn()) throw new Error('warm-up verify failed');
  let n = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    if (!fn()) throw new Error('verify failed');
    n++;
    if (n % 8 === 0) t = performance.now();
  }
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall: n / wall, cpu: n / ((c.user + c.system) / 1e6) };
}

const t0 = performance.now();
loadWasmVerifier();
const loadMs = performance.now() - t0;
const wasm = createWasmVerifier();

const cases: [string, SignatureVerifier][] = [['noble-post-quantum', nobleVerify], [WASM_BACKEND_NAME, wasm]];
const results = new Map<string, { wall: number; cpu: number }[]>();
const record = (k: string, v: { wall: number; cpu: number }): void => void (results.get(k) ?? results.set(k, []).get(k)!).push(v);

console.log(`bench:verify — Node ${process.version}, ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, one thread`);
console.log(`runtime backend: ${verifyBackendName()}; WebAssembly load + self-test ${fmt(loadMs, 1)} ms (once, on first use)`);
console.log(`message ${msg.length} bytes, ${ROUNDS} rounds x ${SECONDS} s per backend and measure, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, verify] of cases) {
    record(`verifySignature | ${name}`, rate(() => verify(payer.publicKey, msg, signed.signature, TX_SIGNATURE_CONTEXT), SECONDS));
    record(`verifyTransaction | ${name}`, rate(() => verifyTx(signed, { ...NETWORKS.live, verify }).ok, SECONDS / 2));
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
console.log('');
console.log('| what | backend | per CPU-second, median | range | wall clock, median | range | ms of CPU each |');
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
for (const [k, xs] of results) {
  const [what, backend] = k.split(' | ');
  const cpu = xs.map((x) => x.cpu);
  const wall = xs.map((x) => x.wall);
  console.log(`| ${what} | ${backend} | ${fmt(median(cpu))} /s | ${fmt(Math.min(...cpu))}–${fmt(Math.max(...cpu))} | ${fmt(median(wall))} /s | ${fmt(Math.min(...wall))}–${fmt(Math.max(...wall))} | ${fmt(1000 / median(cpu), 3)} |`);
}
const med = (k: string, f: 'wall' | 'cpu'): number => median(results.get(k)!.map((x) => x[f]));
const w = `verifySignature | ${WASM_BACKEND_NAME}`;
const n = 'verifySignature | noble-post-quantum';
console.log(`\nWebAssembly / noble (verifySignature, medians): ${(med(w, 'cpu') / med(n, 'cpu')).toFixed(1)}x per CPU-second, ${(med(w, 'wall') / med(n, 'wall')).toFixed(1)}x wall clock`);
console.log(`load average now ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
