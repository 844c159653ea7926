/**
 * `npm run bench:execute`: routed execution (`POST /api/v1/route/execute`) against a local
 * seller, on PostgreSQL + NATS. Issue 21 "Speed": >= 1,000 executions/s on 2 cores, and the
 * marketplace's added latency p50 <= 2 ms over a direct call to the seller, both measured in the
 * same run. For each lane (BENCH_LANES, default `USDC,ANM`) it measures: the direct call (the
 * same header and body straight to the seller), then routed executions of fresh quotes whose fee
 * legs were signed beforehand (one execution per intent), each saturated (BENCH_CONCURRENCY,
 * default 32) and one at a time (the added latency). The seller answers 200 without settling, so
 * each execution is the marketplace's own work: fee leg verification, one execution recorded,
 * the call, then, after the answer is returned (ADR 0046), the answer recorded and, on USDC, the
 * fee settled on the simulated ledger in the same statement (ADR 0052; on ANM the fee waits for
 * the seller transfer's depth). Each run waits for that work to finish too: its rate counts it
 * (done/s), and so does the CPU per execution. After the saturated USDC run the ledger is read
 * back: every fee settled once, whichever marketplace process took it (execute-checks.ts).
 *
 * The marketplace is deployed as BENCH_EXECUTE_MODE says (execute-service.ts): `process`, the
 * default, runs the marketplace, the seller and the load in this one process (and falls back to
 * PGlite without PostgreSQL); `workers` serves it as `npm start` does with MARKET_WORKERS
 * (BENCH_MARKET_WORKERS processes, default 1, PostgreSQL only), the saturated load (the direct
 * call's and the routed one's alike) from test/bench/http-load.ts in a process of its own. In
 * `workers` mode the quotes are asked of the marketplace over HTTP, as a buyer asks them, so the
 * process that quoted holds the purchase; with several workers an execution that reaches
 * another worker than its quote reads the purchase in a statement of its own.
 * One at a time, the calls come from this process in both modes.
 * The seller runs in this process (BENCH_SELLER=here, the default, and always with
 * BENCH_TRACE=1) or in one of its own (seller-serve.ts, BENCH_SELLER=process; its CPU has its
 * column). In `process` mode the saturated load comes from this process, written raw on its
 * sockets by test/bench/raw-load.ts (BENCH_LOAD=here, the default) or sent by a `node:http`
 * client (BENCH_LOAD=client, the load of the figures before 2026-11-29 21:20 UTC), or from
 * test/bench/http-load.ts in another process (BENCH_LOAD=process). All in one process is the
 * cheaper deployment on two cores (no wake-up of another process per call); apart is how a
 * seller and its buyers run.
 * One at a time is measured twice: back to back, where each call shares the service with the
 * previous execution's work after its answer (recording it, the fee, the outbox), and on an idle
 * service, where each call starts once that work is done (the latency a caller sees when the
 * marketplace is not busy).
 * Env: BENCH_OPS (saturated executions per lane, default 3,000), BENCH_SERIAL (one at a time,
 * back to back, 500), BENCH_IDLE (one at a time on an idle service, 300), BENCH_PARTS (the parts
 * to run, comma-separated among `statements,saturated,serial,idle`, default all: to iterate on one),
 * BENCH_BUYERS (USDC buyers the executions are spread over, default 1: every settlement then
 * locks the same payer's balance row), BENCH_RPC_BATCH=0 (the marketplace's reads of the ANM node
 * one request each instead of one batch per turn, ADR 0107). In `process` mode only: BENCH_TRACE=1 (the one-at-a-time
 * parts' critical path, segment by segment: execute-trace.ts), BENCH_PROFILE=<file> (a V8 CPU
 * profile of the saturated routed run, one file per lane: `<file>.<lane>.cpuprofile`). Each row gives the CPU
 * per operation of each process group (execute-measure.ts) and the marketplace's statements.
 */
import { databaseTransport, nameBackends } from './bench-env.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { signLeg } from '../fixtures/market.ts';
import { anmLeg } from '../fixtures/market-anm.ts';
import { balances, drained as drainedIn, settledOnce, type Lane, type Settled } from './execute-checks.ts';
import { idleCpu, inProcess, measure as measureRun, type Row, type Run } from './execute-measure.ts';
import { openExecuteService, type ExecuteMode } from './execute-service.ts';
import { procCpu } from './proc-cpu.ts';
import { answerPaidCall } from './seller-answer.ts';
import { spawnSeller } from './serve-children.ts';
import { encodeRequests, sendExact } from './raw-load.ts';
import { runRequests, type LoadRequest } from './request-load.ts';
import { drive, fmt, percentile, type RunStats } from './stats.ts';
import type { LoadFigures } from './wrk.ts';

const { app: APP } = nameBackends(`anm-execute-bench-${process.pid}`);
const { openEmbedded, openReal, postgresReachable } = await import('../helpers/backends.ts');

const OPS = Number(process.env.BENCH_OPS ?? 3_000);
const SERIAL = Number(process.env.BENCH_SERIAL ?? 500);
const IDLE = Number(process.env.BENCH_IDLE ?? 300);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'statements,saturated,serial,idle').split(','));
const PROFILE = process.env.BENCH_PROFILE;
const BUYERS = Number(process.env.BENCH_BUYERS ?? 1);
const LANES = (process.env.BENCH_LANES ?? 'USDC,ANM').split(',') as Lane[];
const MODE = (process.env.BENCH_EXECUTE_MODE ?? 'process') as ExecuteMode;
if (MODE !== 'workers' && MODE !== 'process') throw new Error(`BENCH_EXECUTE_MODE: ${MODE as string} (workers or process)`);
const WORKERS = Number(process.env.BENCH_MARKET_WORKERS ?? 1);
const LOAD = process.env.BENCH_LOAD ?? 'here';
if (LOAD !== 'process' && LOAD !== 'here' && LOAD !== 'client') throw new Error(`BENCH_LOAD: ${LOAD} (here, client or process)`);
const SELLER = process.env.BENCH_TRACE === '1' ? 'here' : (process.env.BENCH_SELLER ?? 'here');
if (SELLER !== 'process' && SELLER !== 'here') throw new Error(`BENCH_SELLER: ${SELLER} (process or here)`);
const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: generateWallet('live').address };

const agent = new http.Agent({ keepAlive: true, maxSockets: CONC });
function call(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const r = http.request({ method: 'POST', hostname: u.hostname, port: u.port, path: u.pathname, agent, headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('error', reject);
    r.end(body);
  });
}
const check = (want: number) => (status: number) => {
  if (status !== want) throw new Error(`status ${status}, expected ${want}`);
};

// The seller: in this process (BENCH_SELLER=here, the default; always with BENCH_TRACE=1,
// whose marks need it here), or in a process of its own (BENCH_SELLER=process).
const sellerChild = SELLER === 'process' ? await spawnSeller() : null;
const seller = sellerChild ? null : http.createServer(answerPaidCall);
if (seller) await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
const sellerBase = sellerChild?.url ?? `http://127.0.0.1:${(seller!.address() as AddressInfo).port}`;
const sellerCpu = sellerChild ? () => procCpu(sellerChild.pid) : undefined;
const sellerUrl = `${sellerBase}/answer`;

const real = await postgresReachable();
// Several processes share the database in `workers` mode: PGlite, one process's, cannot be it.
if (!real && MODE === 'workers') throw new Error('bench:execute in workers mode needs PostgreSQL (DATABASE_URL); BENCH_EXECUTE_MODE=process runs on PGlite');
const backend = real ? await openReal({ poolSize: 16 }) : await openEmbedded();
const service = await openExecuteService({ mode: MODE, workers: WORKERS, backend, anm: LANES.includes('ANM'), fee: FEE, sellerUrl, benchAgent: agent, sellerHere: SELLER === 'here', loadHere: LOAD !== 'process' });
const { market, rpc, url, trace } = service;
process.stdout.write(`backend ${backend.name} (${real ? databaseTransport(process.env.DATABASE_URL ?? '') : 'PGlite'}); lanes ${LANES.join(', ')}; ${OPS} saturated + ${SERIAL} serial executions per lane, concurrency ${CONC}\n`);
process.stdout.write(`mode ${MODE} (BENCH_EXECUTE_MODE): ${service.label}\n`);
if (MODE === 'workers') process.stdout.write(`saturated load: test/bench/http-load.ts in another Node process, ${CONC} connections; one at a time: this process's client\n`);

type Quote = Awaited<ReturnType<typeof market.purchases.quote>>;
/** A quote asked of the marketplace's processes, as a buyer asks it: the process that answers holds its purchase. */
async function quoteOverHttp(lane: Lane): Promise<Quote> {
  const res = await fetch(`${url}/api/v1/route/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'answer', asset: lane }) });
  if (res.status !== 201) throw new Error(`quote: status ${res.status}`);
  return (await res.json()) as Quote;
}

interface Prepared extends Settled {
  body: string;
  header: string;
}
/** Fresh quotes and their signed legs; the seller header is the buyer's own payment for the seller. */
async function prepare(lane: Lane, n: number): Promise<Prepared[]> {
  const buyersEvm = Array.from({ length: Math.max(1, Math.min(n, BUYERS)) }, () => privateKeyToAccount(generatePrivateKey()));
  const buyerAnm = generateWallet('live');
  if (lane === 'USDC') for (const b of buyersEvm) await market.ledger.fund(b.address, 10n ** 15n);
  else await rpc!.faucet(buyerAnm.address, 10n ** 15n);
  const out: Prepared[] = [];
  await drive(n, 8, async (i) => {
    const q = MODE === 'workers' ? await quoteOverHttp(lane) : await market.purchases.quote({ capability: 'answer', asset: lane });
    const legs = q.payment_requirements.accepts[0]!.extra.legs;
    // The bench's seller never submits its transfer: each ANM execution holds its own pair of
    // nonces until it ends (ADR 0043), so execution i signs 2i and 2i + 1 (nonces ahead of the node's are accepted).
    const buyerEvm = buyersEvm[i % buyersEvm.length]!;
    const [sellerLeg, fee] =
      lane === 'USDC'
        ? [await signLeg(buyerEvm, { to: legs.seller.payTo, value: legs.seller.amount }), await signLeg(buyerEvm, { to: legs.fee.payTo, value: legs.fee.amount })]
        : [anmLeg(buyerAnm, { to: legs.seller.payTo, amount: BigInt(legs.seller.amount), reference: `order:${i}`, nonce: 2n * BigInt(i) }), anmLeg(buyerAnm, { to: legs.fee.payTo, amount: BigInt(legs.fee.amount), reference: legs.fee.reference!, nonce: 2n * BigInt(i) + 1n })];
    const header = Buffer.from(JSON.stringify(sellerLeg)).toString('base64');
    const body = JSON.stringify({ intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header, body: { question: i } });
    out[i] = { id: q.intent_id, payer: lane === 'USDC' ? buyerEvm.address : buyerAnm.address, fee: BigInt(legs.fee.amount), header, body };
  });
  return out;
}

const backendPids = async (): Promise<number[]> =>
  backend.name === 'postgres+nats' ? (await backend.db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map((r) => r.pid) : [];
const measure = (name: string, n: number, run: Run, o: { after?: () => Promise<void>; profile?: string | undefined } = {}): Promise<Row> =>
  measureRun({ name, n, backendPids, serviceCpu: service.cpu, sellerCpu, counts: service, ...o }, run);
const drained = (lane: Lane, ids: string[]): Promise<void> => drainedIn(backend.db, lane, ids);

/**
 * The saturated run: from another process (test/bench/http-load.ts, which sends the count and
 * not one more; the same for the direct call and the routed one), else from this one. In this
 * process the requests' bytes are encoded before the run, so the run counts only their sending.
 */
function saturated(base: string, requests: LoadRequest[], op: (i: number) => Promise<unknown>): Run {
  const row = (f: LoadFigures): RunStats => {
    if (f.non2xx || f.errors) throw new Error(`${base}: ${f.non2xx} answers not 2xx, ${f.errors} errors (${JSON.stringify(f)})`);
    return { ops: f.requests, seconds: f.requests / f.rps, rate: f.rps, p50: f.p50, p99: f.p99 };
  };
  if (MODE === 'process' && LOAD === 'client') return inProcess(requests.length, CONC, op);
  if (MODE === 'process' && LOAD === 'here') {
    const target = new URL(base);
    const wire = encodeRequests(target, requests);
    return async () => ({ r: row(await sendExact(target, wire, CONC)) });
  }
  return async () => {
    // exact: not one request past the count, each routed one a fresh intent's (an extra would be a replay).
    const f = await runRequests({ url: base, requests, count: requests.length, connections: CONC, exact: true });
    return { r: row(f), loadCpuS: f.sendCpuS ?? f.loadCpuS };
  };
}

/**
 * Statements the marketplace sends per execution (each a round trip; BEGIN/COMMIT counted
 * apart), one execution at a time, its work after the answer done before the next one starts:
 * those sent by the time its answer is handed over, and all; the outbox relay's apart.
 */
async function statementsPer(lane: Lane, n: number): Promise<{ before: number; all: number; relay: number }> {
  const prepared = await prepare(lane, n);
  await service.begin();
  for (const p of prepared) {
    await call(`${url}/api/v1/route/execute`, p.body).then(check(200));
    await drained(lane, [p.id]);
  }
  const c = await service.end();
  return { before: c.beforeAnswer / n, all: c.statements / n, relay: c.relay / n };
}

/**
 * One at a time on an idle service: each routed execution starts once the previous one's work
 * after its answer is done, and each direct call after the same kind of pause (10 ms), so both
 * sides of the difference meet a machine that has just been idle.
 */
async function onIdleService(lane: Lane, routed: (p: Prepared) => Promise<unknown>, direct: (p: Prepared) => Promise<unknown>): Promise<{ routed: number[]; direct: number[] }> {
  const prepared = await prepare(lane, IDLE);
  const timed = async (op: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await op();
    return performance.now() - t0;
  };
  const out = { routed: [] as number[], direct: [] as number[] };
  for (const p of prepared) {
    out.direct.push(await timed(() => direct(p)));
    await new Promise((r) => setTimeout(r, 10));
    out.routed.push(await timed(() => routed(p)));
    await drained(lane, [p.id]);
  }
  out.routed.sort((a, b) => a - b);
  out.direct.sort((a, b) => a - b);
  return out;
}

const rows: Row[] = [];
const added: string[] = [];
{
  const idle = await idleCpu({ seconds: 3, backendPids, serviceCpu: service.cpu });
  added.push(`idle, nothing asked for 3 s: CPU ms per second, ${idle.serviceMs === undefined ? '' : `marketplace ${fmt(idle.serviceMs, 1)}, `}this process ${fmt(idle.cpuMs, 1)}, PG backends ${fmt(idle.pgMs, 1)}`);
}
for (const lane of LANES) {
  const direct = (p: Prepared) => call(sellerUrl, JSON.stringify({ question: 1 }), { 'payment-signature': p.header }).then(check(200));
  const routed = (p: Prepared) => call(`${url}/api/v1/route/execute`, p.body).then(check(200));
  const traced = async (p: Prepared): Promise<void> => {
    trace?.begin();
    await routed(p);
    trace?.end();
  };
  if (PARTS.has('statements') || PARTS.has('saturated')) {
    const st = PARTS.has('statements') ? await statementsPer(lane, 20) : null;
    let saturatedStatements = '';
    if (PARTS.has('saturated')) {
      const prepared = await prepare(lane, OPS);
      const directReqs = prepared.map((p): LoadRequest => ({ method: 'POST', path: '/answer', body: JSON.stringify({ question: 1 }), headers: { 'payment-signature': p.header } }));
      rows.push(await measure(`${lane}: direct call to the seller`, OPS, saturated(sellerBase, directReqs, (i) => direct(prepared[i]!))));
      const before = lane === 'USDC' ? await balances(market, FEE.USDC, prepared) : null;
      const routedReqs = prepared.map((p): LoadRequest => ({ method: 'POST', path: '/api/v1/route/execute', body: p.body }));
      const row = await measure(`${lane}: routed execution`, OPS, saturated(url, routedReqs, (i) => routed(prepared[i]!)), {
        after: () => drained(lane, prepared.map((p) => p.id)),
        profile: MODE === 'process' && PROFILE ? `${PROFILE}.${lane}.cpuprofile` : undefined,
      });
      rows.push(row);
      saturatedStatements = `; saturated ${fmt(row.statements!.all, 2)}, the relay's ${fmt(row.statements!.relay, 2)}`;
      if (before) added.push(await settledOnce(backend.db, market, FEE.USDC, prepared, before));
    }
    if (st) added.push(`${lane}: ${fmt(st.all, 1)} SQL statements per execution one at a time, ${fmt(st.before, 1)} of them before the answer is returned, the outbox relay's ${fmt(st.relay, 1)}${saturatedStatements}`);
  }
  if (PARTS.has('serial')) {
    const prepared = await prepare(lane, SERIAL);
    const d1 = await measure(`${lane}: direct call, one at a time`, SERIAL, inProcess(SERIAL, 1, (i) => direct(prepared[i]!)));
    const r1 = await measure(`${lane}: routed execution, one at a time`, SERIAL, inProcess(SERIAL, 1, (i) => traced(prepared[i]!)), { after: () => drained(lane, prepared.map((p) => p.id)) });
    rows.push(d1, r1);
    if (trace) added.push(`${lane}: one at a time, back to back, median of each segment:\n${trace.report()}`);
    added.push(`${lane}: added latency p50 ${fmt(r1.r.p50 - d1.r.p50, 2)} ms (routed ${fmt(r1.r.p50, 2)} ms − direct ${fmt(d1.r.p50, 2)} ms, one at a time, back to back)`);
  }
  if (PARTS.has('idle')) {
    const idle = await onIdleService(lane, traced, direct);
    if (trace) added.push(`${lane}: one at a time on an idle service, median of each segment:\n${trace.report()}`);
    const [ir, id] = [percentile(idle.routed, 50), percentile(idle.direct, 50)];
    added.push(`${lane}: added latency p50 ${fmt(ir - id, 2)} ms on an idle service (routed ${fmt(ir, 2)} ms, p99 ${fmt(percentile(idle.routed, 99), 2)} ms − direct ${fmt(id, 2)} ms; ${IDLE} of each, each after the previous one's work was done)`);
  }
}

const ms = (v: number | undefined, d = 3): string => (v === undefined ? '' : fmt(v, d));
process.stdout.write(
  `\nCPU ms per operation: node, all its processes summed; the marketplace's processes (${MODE === 'process' ? 'this process: all of the node CPU' : 'workers and primary'}); this process (${[MODE === 'process' && 'the marketplace', SELLER === 'here' && 'the seller', 'the load when it comes from here'].filter(Boolean).join(', ')}); the seller's process (BENCH_SELLER=process); the load generator in another process; the bench's PostgreSQL backends; nats-server. Statements: the marketplace's per operation, its outbox relays' included.\n`,
);
process.stdout.write(`\n| measurement | ops/s | done/s | p50 ms | p99 ms | node CPU ms/op | marketplace | this process | seller | load generator | PG backends | nats-server | statements/op | machine busy |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n`);
for (const x of rows) {
  const node = x.cpuMs + (x.serviceMs ?? 0) + (x.loadMs ?? 0) + (x.sellerMs ?? 0);
  const st = x.statements && x.statements.all + x.statements.relay > 0.001 ? fmt(x.statements.all + x.statements.relay, 2) : '';
  process.stdout.write(
    `| ${x.name} | ${fmt(x.r.rate)} | ${x.doneRate === undefined ? '' : fmt(x.doneRate)} | ${fmt(x.r.p50, 2)} | ${fmt(x.r.p99, 1)} | ${fmt(node, 3)} | ${ms(x.serviceMs)} | ${fmt(x.cpuMs, 3)} | ${ms(x.sellerMs)} | ${ms(x.loadMs)} | ${backend.name === 'postgres+nats' ? fmt(x.pgMs, 3) : ''} | ${ms(x.natsMs)} | ${st} | ${fmt(x.busy * 100)} % |\n`,
  );
}
process.stdout.write(`\n${added.join('\n')}\n`);
await service.stop();
agent.destroy();
seller?.closeAllConnections();
seller?.close();
sellerChild?.close();
await backend.close();
