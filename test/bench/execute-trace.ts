/**
 * BENCH_TRACE=1 in `npm run bench:execute`: where one routed execution's time goes, one at a
 * time (the `serial` and `idle` parts, each reported apart). Each execution gets time marks at
 * the steps of its critical path (DESIGN §5 "Routed execution"), and the run prints the median
 * of each segment between two marks. Wall-clock segments: on a shared machine compare them with
 * each other, not with a quiet run. The marks are monkey patches of node:http, the database
 * handle, the pg driver and the lane, so the code measured is the product's own; only the bench
 * installs them.
 */
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../storage/db.ts';
import type { MarketServices } from '../../runtime/market/index.ts';
import { fmt, percentile } from './stats.ts';
import { after, before, PG_QUERY_PROTO } from './trace-patch.ts';

/** The marks in the order an execution passes them. */
const ORDER = [
  'start', // the bench's client sends the request
  'in', // Fastify's onRequest
  'handler', // preHandler: the body is parsed, the rate limit passed
  'verify0', // the fee leg decoded, the purchase and listing known: its signature check starts
  'verify1', // the signature recovered and checked
  'record', // the EXECUTING event is handed to the engine
  'stmt', // its statement goes to the driver (step, snapshot JSON, companions done)
  'wire', // the driver has written it to the database's socket
  'ready', // the driver has read its ReadyForQuery: committed, the answer parsed
  'commit', // the statement's promise settles: EXECUTING committed
  'send', // the request to the seller is ended (written)
  'seller_in', // the seller has the request
  'seller_out', // the seller ends its answer
  'response', // the marketplace's client has the answer's head
  'res_end', // and its body
  'deliver', // the execute answer is built and handed to the route
  'onsend', // Fastify's onSend
  'out', // the answer's end is written to the buyer's socket
  'client', // the bench's client has the whole answer
] as const;
type Mark = (typeof ORDER)[number];

export interface ExecuteTrace {
  /** Starts the marks of the next execution (one at a time only). */
  begin(): void;
  /** Ends them: the execution's answer is in the client's hands. */
  end(): void;
  /** Median ms of each segment over the executions traced since the last report, one per line. */
  report(): string;
}

export function traceExecutions(o: { app: FastifyInstance; db: Db; market: MarketServices; sellerPath: string; benchAgent: http.Agent }): ExecuteTrace {
  const done: Array<Partial<Record<Mark, number>>> = [];
  let cur: Partial<Record<Mark, number>> | null = null;
  const mark = (k: Mark): void => {
    if (cur && cur[k] === undefined) cur[k] = performance.now();
  };
  o.app.addHook('onRequest', (_req, _reply, next) => (mark('in'), next()));
  o.app.addHook('preHandler', (_req, _reply, next) => (mark('handler'), next()));
  o.app.addHook('onSend', (_req, _reply, payload, next) => (mark('onsend'), next(null, payload)));

  // The EXECUTING statement is the one whose event id is `execute:<intent>`.
  const query = o.db.query.bind(o.db);
  o.db.query = <Row,>(sql: string, params?: Parameters<Db['query']>[1]) => {
    const executing = typeof params?.[1] === 'string' && params[1].startsWith('execute:');
    if (executing) mark('stmt');
    const p = query<Row>(sql, params);
    if (executing) p.then(() => mark('commit'), () => undefined);
    return p;
  };
  // The driver's own steps for that statement: written to the socket, and its ReadyForQuery read.
  const executingQuery = (q: unknown): boolean => {
    const v = (q as { values?: unknown[] }).values?.[1];
    return typeof v === 'string' && v.startsWith('execute:');
  };
  after(PG_QUERY_PROTO, 'submit', (q) => executingQuery(q) && mark('wire'));
  before(PG_QUERY_PROTO, 'handleReadyForQuery', (q) => executingQuery(q) && mark('ready'));
  const recordLegs = o.market.purchases.recordLegs.bind(o.market.purchases);
  o.market.purchases.recordLegs = (...a) => (mark('record'), recordLegs(...a));
  const lane = o.market.usdc;
  const checkSigned = lane.checkSigned.bind(lane);
  lane.checkSigned = async (...a) => {
    mark('verify0');
    const r = await checkSigned(...a);
    mark('verify1');
    return r;
  };
  const execute = o.market.executions.execute.bind(o.market.executions);
  o.market.executions.execute = (input, deliver) => execute(input, (r) => (mark('deliver'), deliver?.(r)));

  // The marketplace's call to the seller: not the bench's own direct calls (their agent).
  const ours = (req: http.ClientRequest): boolean => req.path === o.sellerPath && (req as unknown as { agent: unknown }).agent !== o.benchAgent;
  before(http.ClientRequest.prototype, 'end', (req) => ours(req) && mark('send'));
  before(http.ClientRequest.prototype, 'emit', (req, [ev, res]) => {
    if (ev !== 'response' || !ours(req)) return;
    mark('response');
    // Registered before the forward's own listener: the mark is taken as the body ends.
    (res as http.IncomingMessage).once('end', () => mark('res_end'));
  });
  before(http.ServerResponse.prototype, 'end', (res) => {
    const url = (res as http.ServerResponse).req.url;
    if (url === o.sellerPath) mark('seller_out');
    else if (url?.endsWith('/route/execute')) mark('out');
  });
  before(http.Server.prototype, 'emit', (_server, [ev, req]) => ev === 'request' && (req as http.IncomingMessage).url === o.sellerPath && mark('seller_in'));

  return {
    begin() {
      cur = { start: performance.now() };
    },
    end() {
      mark('client');
      if (cur) done.push(cur);
      cur = null;
    },
    report() {
      const lines: string[] = [];
      for (let i = 1; i < ORDER.length; i++) {
        const [a, b] = [ORDER[i - 1]!, ORDER[i]!];
        const v = done.map((m) => m[b]! - m[a]!).filter(Number.isFinite).sort((x, y) => x - y);
        if (v.length > 0) lines.push(`${a} → ${b}: ${fmt(percentile(v, 50), 3)} ms`);
      }
      done.length = 0;
      return lines.join('\n');
    },
  };
}
