/**
 * A marketplace with a running scanner for the scanner suites: the engine (consumer, timer
 * sweeper) with the scanner as its after-commit hook, the market services on the same host,
 * and the HTTP app with an operator token. Rounds are fast (`intervalMs`) so a test sees
 * many of them; sellers are on 127.0.0.1, so private targets are allowed as in development.
 */
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildMarketApp } from '../../gateway/market/app.ts';
import type { Bus } from '../../runtime/bus/types.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { Scanner, type ScannerOptions } from '../../runtime/market/scanner/scanner.ts';
import type { Db } from '../../storage/db.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL, type Backend } from '../helpers/backends.ts';
import { request, type ReqOptions, type Res } from '../conformance/harness.ts';
import { FEE_ADDRESSES } from './harness.ts';

export const OPERATOR_TOKEN = 'op_scanner_test_token_0123456789';

export interface ScanRuntime {
  engine: Engine;
  scanner: Scanner;
  stop(): Promise<void>;
}

/**
 * A second runtime process's connections to the backend's schema and namespace: its own pool
 * and bus connection on the real backends; embedded, the same PGlite and in-process bus.
 */
export async function secondConnections(backend: Backend): Promise<{ db: Db; bus: Bus; close(): Promise<void> }> {
  if (!backend.schema || !backend.namespace) return { db: backend.db, bus: backend.bus, close: async () => undefined };
  const db = await openDb({ databaseUrl: DATABASE_URL, schema: backend.schema, poolSize: 4 });
  const bus = await NatsBus.connect({ url: NATS_URL, namespace: backend.namespace });
  return { db, bus, close: async () => { await bus.close(); await db.close(); } };
}

/** One runtime process's share: consumer, sweeper and scanner over a database and a bus. */
export async function startScanRuntime(db: Db, bus: Bus, opts: Partial<ScannerOptions> = {}): Promise<ScanRuntime> {
  // The hook runs only once the engine has started, after `scanner` exists.
  const engine: Engine = new Engine({ db, bus, registry: machineRegistry(), hooks: { afterCommit: (r, e): void => scanner.afterCommit(r, e) }, sweeper: { pollMs: 20 } });
  const scanner: Scanner = new Scanner(db, engine.host, { forward: { allowPrivate: true, timeoutMs: 1_000 }, intervalMs: 150, jitterMs: 20, ...opts });
  await engine.start({ feed: false });
  return {
    engine,
    scanner,
    async stop() {
      await engine.stop();
      await scanner.idle();
    },
  };
}

export interface ScanMarket {
  url: string;
  market: MarketServices;
  app: FastifyInstance;
  req(method: string, path: string, opts?: ReqOptions): Promise<Res>;
  close(): Promise<void>;
}

/** `takeoverCooldownMs`: the listings' wait between takeover probes (ADR 0072), short where a test makes several. */
export async function startScanMarket(rt: ScanRuntime, db: Db, opts: { takeoverCooldownMs?: number } = {}): Promise<ScanMarket> {
  const market = openMarket(db, rt.engine.host, { feeAddresses: FEE_ADDRESSES, forward: { allowPrivate: true, timeoutMs: 10_000 }, scanner: rt.scanner, firstProbeMaxMs: 20, ...opts });
  const app = await buildMarketApp({ ...market, perIpPerMinute: 1e6, operatorToken: OPERATOR_TOKEN });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, market, app, req: (method, path, o) => request(url, method, path, o), close: () => app.close() };
}

/** Stops what a scanner suite started, each part only if it got that far: runtime, market, the sellers' server, the backend. */
export async function stopScanSuite(p: { rt?: ScanRuntime | undefined; m?: ScanMarket | undefined; server?: Server | undefined; backend?: Backend | undefined }): Promise<void> {
  await p.rt?.stop();
  await p.m?.close();
  p.server?.closeAllConnections();
  await new Promise((r) => (p.server ? p.server.close(r) : r(undefined)));
  await p.backend?.close();
}
