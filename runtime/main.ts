/**
 * Composition root: `npm start`. Wires the embedded or real adapters from the environment,
 * starts the runtime, and on SIGTERM/SIGINT drains (stop taking work, finish in-flight
 * transactions, flush the outbox) before closing connections.
 */
import { loadConfig } from './config.ts';
import { startServices } from './services.ts';

const config = loadConfig();
const services = await startServices(config);
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
