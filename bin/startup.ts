import { createServer } from 'node:net';
import { ConfigError, type Config, type Role } from '../runtime/config.ts';
import { DataDirBusyError } from '../storage/data-dir-lock.ts';

/**
 * What a process can be told at start and must refuse: a busy data directory, a port in use,
 * roles split over the embedded defaults. Each is one line for the operator, never a stack.
 */
export class StartupError extends Error {}

/** The one line to print for an error that stopped the start, or null when it is a bug (print the stack). */
export function startupLine(err: unknown): string | null {
  if (err instanceof StartupError || err instanceof DataDirBusyError || err instanceof ConfigError) return `anmpay: ${err.message}`;
  return null;
}

/** Runs a listen and turns "address in use" (or "not allowed") into a line naming the variable to change. */
/** The settings that name a port this process listens on. */
export type PortVariable = 'PORT' | 'MARKETPLACE_PORT' | 'DEVNET_PORT' | 'METRICS_PORT' | 'DEMO_SELLER_PORT';

export async function listening<T>(variable: PortVariable, host: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartupError(`port ${port} on ${host} is in use: set ${variable} to a free port (or stop what listens there)`);
    if (code === 'EACCES') throw new StartupError(`port ${port} on ${host} needs privileges: set ${variable} to a port above 1023`);
    if (code === 'EADDRNOTAVAIL') throw new StartupError(`${host} is not an address of this machine: set HOST (used with ${variable})`);
    throw err;
  }
}

/**
 * Binds and lets go of a port, so a port in use is reported before the store opens (which
 * takes seconds on PGlite) rather than after. The real listen is still checked: the port can
 * be taken in between.
 */
export function probePort(variable: PortVariable, host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return listening(variable, host, port, () =>
    new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
    }),
  );
}

/** The roles that work together on the embedded defaults only when one process runs them all. */
const CORE: readonly Role[] = ['gateway', 'runtime', 'indexer'];

/**
 * A process that runs only part of the core works with other processes over shared services,
 * so the in-process ones (PGlite, the in-process bus and devnet, per-directory secrets) cannot
 * do. Leaving out `marketplace` alone keeps the process whole.
 */
export function checkRoles(config: Config): void {
  const roles = config.ANMPAY_ROLES;
  checkMarketWorkers(config);
  if (CORE.every((r) => roles.has(r))) return;
  const missing: string[] = [];
  if (!config.DATABASE_URL) missing.push('DATABASE_URL');
  if (!config.NATS_URL) missing.push('NATS_URL');
  if (roles.has('gateway') || roles.has('indexer')) {
    if (!config.ANM_TEST_RPC_URL) missing.push('ANM_TEST_RPC_URL');
    if (!config.ANM_RPC_URL) missing.push('ANM_RPC_URL');
  }
  // Every gateway must hash keys with the same pepper and accept the same operator token.
  if (roles.has('gateway')) {
    if (!config.ANMPAY_KEY_PEPPER) missing.push('ANMPAY_KEY_PEPPER');
    if (!config.ANMPAY_OPERATOR_TOKEN) missing.push('ANMPAY_OPERATOR_TOKEN');
  }
  if (missing.length) {
    throw new StartupError(
      `ANMPAY_ROLES=${[...roles].join(',')} runs part of the service beside other processes, which the embedded defaults cannot share: set ${missing.join(', ')} (docs/deploy.md)`,
    );
  }
}

/**
 * Several marketplace processes share one database and bus: the embedded database (PGlite) and
 * the in-process bus belong to one process, so MARKET_WORKERS above 1 needs the real ones.
 */
function checkMarketWorkers(config: Config): void {
  if (config.MARKET_WORKERS === 1 || !config.ANMPAY_ROLES.has('marketplace')) return;
  const missing = [...(config.DATABASE_URL ? [] : ['DATABASE_URL']), ...(config.NATS_URL ? [] : ['NATS_URL'])];
  if (missing.length) {
    throw new StartupError(
      `MARKET_WORKERS=${config.MARKET_WORKERS} runs the marketplace in ${config.MARKET_WORKERS} processes, which the embedded database cannot serve (it belongs to one process): set ${missing.join(', ')}, or MARKET_WORKERS=1 (docs/deploy.md)`,
    );
  }
}
