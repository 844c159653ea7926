/**
 * The server side of `npm run bench:api`, in its own process: the merchant HTTP edge as
 * services.ts wires it (Engine with its bus consumer, outbox relay to NATS JetStream and
 * timer sweeper; gate, idempotency, reads) on real PostgreSQL, plus a bare Fastify route in
 * the same process for the ratio. Prints one JSON line with both URLs, then serves until
 * SIGTERM. `GET /cpu` on the bare server: this process's CPU and SQL statements so far. Env: BENCH_LINKS (1: payment links too), BENCH_SCHEMA, BENCH_NAMESPACE, ANMPAY_KEY_PEPPER, BENCH_POOL (default: the service's
 * DATABASE_POOL_SIZE), RATE_LIMIT_*.
 */
import Fastify from 'fastify';
import { startHttp } from '../../gateway/server.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { openCommerceServices, startHoldFollower } from '../../runtime/commerce/index.ts';
import { loadConfig } from '../../runtime/config.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMerchantServices } from '../../runtime/merchant/index.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL } from '../helpers/backends.ts';
import { countingDb } from '../helpers/counting-db.ts';

const env = process.env;
const config = loadConfig(env);
const db = countingDb(await openDb({ databaseUrl: DATABASE_URL, schema: env.BENCH_SCHEMA, poolSize: Number(env.BENCH_POOL ?? config.DATABASE_POOL_SIZE) }), { withTxFrame: true });
const bus = await NatsBus.connect({ url: NATS_URL, namespace: env.BENCH_NAMESPACE! });
const engine = new Engine({ db, bus, registry: machineRegistry() });
await engine.start();
const merchant = await openMerchantServices(db, config, { demo: false });
// bench:links: payment links and the hold follower too (off for bench:api, whose figures predate them).
const links = env.BENCH_LINKS === '1';
const holds = links ? await startHoldFollower(bus, engine.host) : undefined;
const commerce = links ? { commerce: openCommerceServices(db, { payPerIpPerMinute: config.ANMPAY_LINK_PAY_PER_MIN }) } : {};
const http = await startHttp({ ...merchant, ...commerce, host: engine.host, dbHealthy: async () => true, logger: false }, { host: '127.0.0.1', port: 0 });

const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ ok: true }));
// CPU seconds of this process and the SQL statements it sent (a transaction's BEGIN and COMMIT
// count), so the driver can report both per request.
bare.get('/cpu', async () => ({ ...process.cpuUsage(), statements: db.queries }));
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

process.stdout.write(`${JSON.stringify({ api: http.url, bare: bareUrl })}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await http.close();
    await bare.close();
    await holds?.stop();
    await engine.stop();
    await bus.dispose();
    await bus.close();
    await db.close();
    process.exit(0);
  })();
});
