/**
 * The process entry: `npm start`. Reads the configuration, starts this process's roles
 * (services.ts), or one marketplace worker of several (market-workers.ts), and on SIGTERM/SIGINT drains (stop taking work, finish in-flight
 * transactions, flush the outbox) before closing connections. What an operator can fix (a
 * setting, a busy data directory, a port in use) is one line on stderr and exit code 1.
 */
import { loadConfig } from '../runtime/config.ts';
import { startServices, type Services } from './services.ts';
import { startupLine } from './startup.ts';
import { marketWorkerIndex, reportWorkerReady } from './market-workers.ts';

let services: Services;
try {
  services = await startServices(loadConfig());
} catch (err) {
  const line = startupLine(err);
  console.error(line ?? err);
  process.exit(1);
}

let stopping = false;
const shutdown = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  services.log(`received ${signal}, draining`);
  services
    .stop()
    .then(() => process.exit(0))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
// A marketplace worker (MARKET_WORKERS, ADR 0051) serves while its primary lives: a primary
// gone without stopping it (SIGKILL) closes the channel, and the worker drains and exits.
if (marketWorkerIndex() !== undefined) {
  process.on('disconnect', () => shutdown('the primary process gone'));
  reportWorkerReady(services.marketplace?.url ?? '');
}
