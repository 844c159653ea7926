/**
 * `npm run bench:execute`: routed execution (`POST /api/v1/route/execute`) against a local
 * seller, on PostgreSQL + NATS (PGlite when PostgreSQL is unreachable). Issue 21 "Speed":
 * >= 1,000 executions/s on 2 cores, and the marketplace's added latency p50 <= 2 ms over a
 * direct call to the seller, both measured in the same run. For each lane (BENCH_LANES,
 * default `USDC,ANM`) it measures: the direct call (the same header and body straight to the
 * seller), then routed executions of fresh quotes whose fee legs were signed beforehand, each
 * saturated (BENCH_CONCURRENCY, default 32) and one at a time (the added latency). The seller
 * answers 200 without settling, so each execution is the marketplace's own work: fee leg
 * verification, one execution recorded, the call, then, after the answer is returned (ADR
 * 0046), the answer recorded and, on USDC, the fee settled on the simulated ledger in the same
 * statement (ADR 0052; on ANM the fee waits for the seller transfer's depth). Each run waits for that work to finish too: its
 * rate counts it, and so does the CPU per execution. The load generator and, on ANM, the
 * devnet run in this process: their CPU counts against it.
 * One at a time is measured twice: back to back, where each call shares the process with the
 * previous execution's work after its answer (recording it, the fee, the outbox), and on an idle
 * service, where each call starts once that work is done (the latency a caller sees when the
 * marketplace is not busy).
 * Env: BENCH_OPS (saturated executions per lane, default 3,000), BENCH_SERIAL (one at a time,
 * back to back, 500), BENCH_IDLE (one at a time on an idle service, 300), BENCH_PARTS (the parts
 * to run, comma-separated among `statements,saturated,serial,idle`, default all: to iterate on one),
 * BENCH_TRACE=1 (the serial part's critical path, segment by segment: execute-trace.ts),
 * BENCH_BUYERS (USDC buyers the executions are spread over, default 1: every settlement then
 * locks the same payer's balance row), BENCH_PROFILE=<file> (a V8 CPU profile of the saturated
 * routed run, one file per lane: `<file>.<lane>.cpuprofile`). Each row also gives the CPU per operation of the bench's own
 * PostgreSQL backends and of nats-server (execute-measure.ts).
 */
import { databaseTransport, nameBackends } from './bench-env.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import type { Db } from '../../storage/db.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg } from '../fixtures/market.ts';
import { anmLeg } from '../fixtures/market-anm.ts';
import { measure as measureRun, type Row } from './execute-measure.ts';
import { drive, fmt, percentile } from './stats.ts';
import { traceExecutions } from './execute-trace.ts';

const { app: APP } = nameBackends(`anm-execute-bench-${process.pid}`);
const { openEmbedded, openReal, postgresReachable } = await import('../helpers/backends.ts');

const OPS = Number(process.env.BENCH_OPS ?? 3_000);
const SERIAL = Number(process.env.BENCH_SERIAL ?? 500);
const IDLE = Number(process.env.BENCH_IDLE ?? 300);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'statements,saturated,serial,idle').split(','));
const PROFILE = process.env.BENCH_PROFILE;
const BUYERS = Number(process.env.BENCH_BUYERS ?? 1);
const LANES = (process.env.BENCH_LANES ?? 'USDC,ANM').split(',') as Array<'USDC' | 'ANM'>;
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

// The seller: answers every paid call at once, as a seller behind a fast handler would.
const seller = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==' }).end('{"answer":42}'));
});
await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
const sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/answer`;

const devnet = LANES.includes('ANM') ? await startDevnetServer({ port: 0, blockMs: 0 }) : null;
const rpc = devnet ? new AnmRpcClient(`${devnet.url}/live`) : null;
const backend = (await postgresReachable()) ? await openReal({ poolSize: 16 }) : await openEmbedded();
// As in a marketplace process, the engine relays the outbox rows its commits write (the
// listing's paid-call success, ADR 0046), on a database handle of its own so that its
// statements are counted apart: a claim serves the commits of its gathering window.
let relayStatements = 0;
const [dbQuery, dbTx] = [backend.db.query.bind(backend.db), backend.db.tx.bind(backend.db)];
const relayDb: Db = {
  kind: backend.db.kind,
  query: (sql, params) => (relayStatements++, dbQuery(sql, params)),
  exec: (sql) => backend.db.exec(sql),
  tx: (fn) => ((relayStatements += 2), dbTx((q) => fn({ query: (sql, params) => (relayStatements++, q.query(sql, params)), exec: (sql) => q.exec(sql) }))),
  close: () => Promise.resolve(),
};
const relay = new OutboxRelay(relayDb, backend.bus);
const host = new ActorHost({ db: backend.db, bus: backend.bus, registry: machineRegistry(), onOutbox: () => relay.nudge() });
relay.start();
const market = openMarket(backend.db, host, { feeAddresses: FEE, forward: { allowPrivate: true }, ...(rpc && { anm: { rpc } }) });
const sellerEvm = privateKeyToAccount(generatePrivateKey());
const sellerAnm = generateWallet('live');
const resourceId = resourceIdOf('POST', sellerUrl);
await host.apply({ kind: 'listing', id: resourceId }, {
  type: 'listing.register', id: 'r1', at: Date.now(), resource_id: resourceId, provider_id: 'prov_b0b0', name: 'answer service', description: 'The answer', category: 'answer', tags: ['answer'],
  endpoint: sellerUrl, method: 'POST', model: 'per_call', documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  assets: [{ asset: 'USDC', pay_to: sellerEvm.address, seller_price_atomic: '20000' }, { asset: 'ANM', pay_to: sellerAnm.address, seller_price_atomic: '250000000' }],
});
await market.start(60_000);
const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
const trace = process.env.BENCH_TRACE === '1' ? traceExecutions({ app, db: backend.db, market, sellerPath: new URL(sellerUrl).pathname, benchAgent: agent }) : null;
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`backend ${backend.name} (${backend.name === 'postgres+nats' ? databaseTransport(process.env.DATABASE_URL ?? '') : 'PGlite'}); lanes ${LANES.join(', ')}; ${OPS} saturated + ${SERIAL} serial executions per lane, concurrency ${CONC}\n`);

interface Prepared {
  id: string;
  body: string;
  header: string;
}
/** Fresh quotes and their signed legs; the seller header is the buyer's own payment for the seller. */
async function prepare(lane: 'USDC' | 'ANM', n: number): Promise<Prepared[]> {
  const buyersEvm = Array.from({ length: Math.max(1, Math.min(n, BUYERS)) }, () => privateKeyToAccount(generatePrivateKey()));
  const buyerAnm = generateWallet('live');
  if (lane === 'USDC') for (const b of buyersEvm) await market.ledger.fund(b.address, 10n ** 15n);
  else await rpc!.faucet(buyerAnm.address, 10n ** 15n);
  const out: Prepared[] = [];
  await drive(n, 8, async (i) => {
    const q = await market.purchases.quote({ capability: 'answer', asset: lane });
    const legs = q.payment_requirements.accepts[0]!.extra.legs;
    // The bench's seller never submits its transfer: each ANM execution holds its own pair of
    // nonces until it ends (ADR 0043), so execution i signs 2i and 2i + 1 (nonces ahead of the node's are accepted).
    const buyerEvm = buyersEvm[i % buyersEvm.length]!;
    const [sellerLeg, fee] =
      lane === 'USDC'
        ? [await signLeg(buyerEvm, { to: legs.seller.payTo, value: legs.seller.amount }), await signLeg(buyerEvm, { to: legs.fee.payTo, value: legs.fee.amount })]
        : [anmLeg(buyerAnm, { to: legs.seller.payTo, amount: BigInt(legs.seller.amount), reference: `order:${i}`, nonce: 2n * BigInt(i) }), anmLeg(buyerAnm, { to: legs.fee.payTo, amount: BigInt(legs.fee.amount), reference: legs.fee.reference!, nonce: 2n * BigInt(i) + 1n })];
    const header = Buffer.from(JSON.stringify(sellerLeg)).toString('base64');
    out[i] = { id: q.intent_id, header, body: JSON.stringify({ intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header, body: { question: i } }) };
  });
  return out;
}

const backendPids = async (): Promise<number[]> =>
  backend.name === 'postgres+nats' ? (await backend.db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map((r) => r.pid) : [];
const measure = (name: string, n: number, conc: number, op: (i: number) => Promise<unknown>, after?: () => Promise<void>, profile?: string): Promise<Row> =>
  measureRun({ name, n, conc, backendPids, after, profile }, op);

const rawQuery = backend.db.query.bind(backend.db);
/**
 * Waits until the work an execution does after its answer is done: on USDC the fee settled
 * (SETTLED), on ANM the answer recorded (the fee waits for the seller transfer's depth); and
 * the outbox relayed.
 */
async function drained(lane: 'USDC' | 'ANM', ids: string[]): Promise<void> {
  const done = lane === 'USDC' ? `a.state = 'SETTLED'` : `a.snapshot->'context'->'execution'->>'seller_status' IS NOT NULL`;
  // Each poll asks only about the executions not yet seen done, and whether any outbox row
  // waits at all: a poll that counted every execution and every unpublished row took a core's
  // share of PostgreSQL while the last work was finishing, and counted against it.
  let pending = ids;
  for (;;) {
    const { rows } = await rawQuery<{ id: string | null; waiting: boolean }>(
      `SELECT a.id, EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL) AS waiting
         FROM (SELECT 1) AS one LEFT JOIN actors a ON a.id = ANY($1) AND ${done}`,
      [pending],
    );
    const seen = new Set(rows.map((r) => r.id).filter((id): id is string => id !== null));
    pending = pending.filter((id) => !seen.has(id));
    if (pending.length === 0 && !rows[0]!.waiting) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Count of statements sent when an execution's answer is handed over (ADR 0046). */
let atAnswer = 0;
let count = 0;
{
  const run = market.executions.execute.bind(market.executions);
  market.executions.execute = (input, deliver) =>
    run(input, (r) => {
      atAnswer += count;
      deliver?.(r);
    });
}

/**
 * Statements the service sends per execution (each a round trip; BEGIN/COMMIT counted apart):
 * those sent by the time its answer is handed over, and all, once the work after it is done.
 */
async function statementsPer(lane: 'USDC' | 'ANM', n: number): Promise<{ before: number; all: number; relay: number }> {
  const prepared = await prepare(lane, n);
  const db = backend.db as { query: (...a: unknown[]) => Promise<unknown>; tx: (fn: (q: unknown) => Promise<unknown>) => Promise<unknown> };
  const [query, tx] = [db.query.bind(db), db.tx.bind(db)];
  let [before, all] = [0, 0];
  const relay0 = relayStatements;
  db.query = (...a) => (count++, query(...a));
  const counted = (q: object): object =>
    new Proxy(q, {
      get: (t, k): unknown => {
        if (k !== 'query') return Reflect.get(t, k);
        const inner = t as { query: (...x: unknown[]) => unknown };
        return (...a: unknown[]) => (count++, inner.query(...a));
      },
    });
  db.tx = (fn) => ((count += 2), tx((q) => fn(counted(q as object))));
  for (const p of prepared) {
    // One execution at a time, its work after the answer done before the next one starts.
    count = 0;
    atAnswer = 0;
    await call(`${url}/api/v1/route/execute`, p.body).then(check(200));
    await drained(lane, [p.id]);
    before += atAnswer;
    all += count;
  }
  db.query = query;
  db.tx = tx;
  return { before: before / n, all: all / n, relay: (relayStatements - relay0) / n };
}

/**
 * One at a time on an idle service: each routed execution starts once the previous one's work
 * after its answer is done, and each direct call after the same kind of pause (10 ms), so both
 * sides of the difference meet a machine that has just been idle.
 */
async function onIdleService(lane: 'USDC' | 'ANM', routed: (p: Prepared) => Promise<unknown>, direct: (p: Prepared) => Promise<unknown>): Promise<{ routed: number[]; direct: number[] }> {
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
for (const lane of LANES) {
  const direct = (p: Prepared) => call(sellerUrl, JSON.stringify({ question: 1 }), { 'payment-signature': p.header }).then(check(200));
  const routed = (p: Prepared) => call(`${url}/api/v1/route/execute`, p.body).then(check(200));
  if (PARTS.has('statements') || PARTS.has('saturated')) {
    const st = PARTS.has('statements') ? await statementsPer(lane, 20) : null;
    let saturatedRelay = '';
    if (PARTS.has('saturated')) {
      const prepared = await prepare(lane, OPS);
      rows.push(await measure(`${lane}: direct call to the seller`, OPS, CONC, (i) => direct(prepared[i]!)));
      const relay0 = relayStatements;
      rows.push(await measure(`${lane}: routed execution`, OPS, CONC, (i) => routed(prepared[i]!), () => drained(lane, prepared.map((p) => p.id)), PROFILE && `${PROFILE}.${lane}.cpuprofile`));
      saturatedRelay = `, ${fmt((relayStatements - relay0) / OPS, 2)} in the saturated run`;
    }
    if (st) added.push(`${lane}: ${fmt(st.all, 1)} SQL statements per execution, ${fmt(st.before, 1)} of them before the answer is returned; the outbox relay's ${fmt(st.relay, 1)} one execution at a time${saturatedRelay}`);
  }
  if (PARTS.has('serial')) {
    const prepared = await prepare(lane, SERIAL);
    const d1 = await measure(`${lane}: direct call, one at a time`, SERIAL, 1, (i) => direct(prepared[i]!));
    const traced = async (p: Prepared): Promise<void> => {
      trace?.begin();
      await routed(p);
      trace?.end();
    };
    const r1 = await measure(`${lane}: routed execution, one at a time`, SERIAL, 1, (i) => traced(prepared[i]!), () => drained(lane, prepared.map((p) => p.id)));
    rows.push(d1, r1);
    if (trace) added.push(`${lane}: one at a time, back to back, median of each segment:\n${trace.report()}`);
    added.push(`${lane}: added latency p50 ${fmt(r1.r.p50 - d1.r.p50, 2)} ms (routed ${fmt(r1.r.p50, 2)} ms − direct ${fmt(d1.r.p50, 2)} ms, one at a time, back to back)`);
  }
  if (PARTS.has('idle')) {
    const idle = await onIdleService(lane, routed, direct);
    const [ir, id] = [percentile(idle.routed, 50), percentile(idle.direct, 50)];
    added.push(`${lane}: added latency p50 ${fmt(ir - id, 2)} ms on an idle service (routed ${fmt(ir, 2)} ms, p99 ${fmt(percentile(idle.routed, 99), 2)} ms − direct ${fmt(id, 2)} ms; ${IDLE} of each, each after the previous one's work was done)`);
  }
}

process.stdout.write(`\n| measurement | ops/s | done/s | p50 ms | p99 ms | node CPU ms/op | PG backends CPU ms/op | nats-server CPU ms/op | machine busy |\n|---|---|---|---|---|---|---|---|---|\n`);
for (const x of rows) process.stdout.write(`| ${x.name} | ${fmt(x.r.rate)} | ${x.doneRate === undefined ? '' : fmt(x.doneRate)} | ${fmt(x.r.p50, 2)} | ${fmt(x.r.p99, 1)} | ${fmt(x.cpuMs, 3)} | ${x.pgMs === undefined ? '' : fmt(x.pgMs, 3)} | ${x.natsMs === undefined ? '' : fmt(x.natsMs, 3)} | ${fmt(x.busy * 100)} % |\n`);
process.stdout.write(`\n${added.join('\n')}\n`);
await relay.stop();
market.stop();
await app.close();
agent.destroy();
seller.closeAllConnections();
seller.close();
await devnet?.close();
await backend.close();
