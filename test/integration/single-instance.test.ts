/**
 * DESIGN §6: "The embedded store takes a lock: a second `npm start` on the same data directory
 * refuses with a clear message; a port in use is a one-line error naming the variable to
 * change." And ANMPAY_ROLES: a bad list, or roles split over the embedded defaults, is one line.
 */
import { createServer, type Server } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../runtime/config.ts';
import { checkRoles, StartupError } from '../../bin/startup.ts';
import { DataDirBusyError, lockDataDir } from '../../storage/data-dir-lock.ts';
import { ServiceProcess } from '../helpers/service-process.ts';

const dirs: string[] = [];
const tempDir = async (): Promise<string> => {
  const d = await mkdtemp(path.join(tmpdir(), 'anmpay-single-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** One line on stderr, nothing else: no stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

async function busyPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return { server, port: addr.port };
}

describe('one process per data directory (spawned npm start)', () => {
  let first: ServiceProcess;
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir();
    first = ServiceProcess.spawn('first', { ANMPAY_DATA_DIR: dir, PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEMO_SELLER_PORT: '0', DEVNET_BLOCK_MS: '0', LOG_LEVEL: 'info' });
    await first.waitForLog(/^started$/, 170_000);
  }, 180_000);
  afterAll(async () => {
    expect(await first.stop()).toBe(0);
    // A clean stop lets go of the lock.
    await expect(readFile(path.join(dir, 'anmpay.lock'))).rejects.toThrow();
  });

  it('a second start on the same directory refuses in one line, before opening the store', async () => {
    const second = ServiceProcess.spawn('second', { ANMPAY_DATA_DIR: dir, PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEMO_SELLER_PORT: '0', LOG_LEVEL: 'info' });
    expect(await second.exited).toBe(1);
    const line = oneLine(second.stderr);
    expect(line).toMatch(new RegExp(`^anmpay: another anmpay process \\(pid ${first.child.pid} on .*\\) is using the data directory .*; stop it, or set ANMPAY_DATA_DIR`));
    // The first log line comes once storage is open: the second never got there.
    expect(second.stdout).toBe('');
    // And the first still serves.
    expect(first.child.exitCode).toBeNull();
  }, 120_000);

  it('a port in use is one line naming PORT, and the start undoes itself (lock released)', async () => {
    const { server, port } = await busyPort();
    const other = await tempDir();
    try {
      const p = ServiceProcess.spawn('port', { ANMPAY_DATA_DIR: other, PORT: String(port), MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEMO_SELLER_PORT: '0' });
      expect(await p.exited).toBe(1);
      expect(oneLine(p.stderr)).toBe(`anmpay: port ${port} on 127.0.0.1 is in use: set PORT to a free port (or stop what listens there)`);
      await expect(readFile(path.join(other, 'anmpay.lock'))).rejects.toThrow();
    } finally {
      server.close();
    }
  }, 120_000);

  it.each(['DEVNET_PORT', 'MARKETPLACE_PORT', 'DEMO_SELLER_PORT'] as const)('%s in use names that variable', async (variable) => {
    const { server, port } = await busyPort();
    try {
      const ports = { PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEMO_SELLER_PORT: '0', [variable]: String(port) };
      const p = ServiceProcess.spawn(variable.toLowerCase(), { ANMPAY_DATA_DIR: await tempDir(), ...ports });
      expect(await p.exited).toBe(1);
      expect(oneLine(p.stderr)).toMatch(new RegExp(`^anmpay: port \\d+ on 127\\.0\\.0\\.1 is in use: set ${variable} to a free port`));
    } finally {
      server.close();
    }
  }, 120_000);

  it('a bad ANMPAY_ROLES and roles split over the embedded defaults are one line each', async () => {
    const bad = ServiceProcess.spawn('roles', { ANMPAY_DATA_DIR: await tempDir(), ANMPAY_ROLES: 'gateway,cron' });
    const split = ServiceProcess.spawn('split', { ANMPAY_DATA_DIR: await tempDir(), ANMPAY_ROLES: 'runtime' });
    expect(await bad.exited).toBe(1);
    expect(oneLine(bad.stderr)).toBe('anmpay: invalid configuration: ANMPAY_ROLES: unknown role "cron"; use a comma-separated list of gateway, runtime, indexer, marketplace');
    expect(await split.exited).toBe(1);
    expect(oneLine(split.stderr)).toMatch(/^anmpay: ANMPAY_ROLES=runtime runs part of the service .*: set DATABASE_URL, NATS_URL \(docs\/deploy\.md\)$/);
  }, 120_000);
});

describe('the lock file', () => {
  it('takes over a lock whose process is gone, refuses one whose process lives', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'anmpay.lock');
    // A pid that cannot be running (above the kernel's pid_max).
    await writeFile(file, JSON.stringify({ pid: 4_194_305, host: hostname(), since: 'earlier' }));
    const lock = await lockDataDir(dir);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
    await writeFile(file, JSON.stringify({ pid: process.ppid, host: hostname(), since: 'earlier' }));
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirBusyError);
    // Untouched for longer than the holder's refresh allows: stale whatever the pid says.
    const old = new Date(Date.now() - 60_000);
    const { utimes } = await import('node:fs/promises');
    await utimes(file, old, old);
    const again = await lockDataDir(dir);
    await again.release();
  });
});

describe('ANMPAY_ROLES', () => {
  const env = { DATABASE_URL: 'postgres://x@127.0.0.1/db', NATS_URL: 'nats://127.0.0.1:4222' };
  it('defaults to every role and takes a comma-separated list', () => {
    expect([...loadConfig({}).ANMPAY_ROLES]).toEqual(['gateway', 'runtime', 'indexer', 'marketplace']);
    expect([...loadConfig({ ANMPAY_ROLES: ' runtime , indexer' }).ANMPAY_ROLES]).toEqual(['runtime', 'indexer']);
    expect(() => loadConfig({ ANMPAY_ROLES: '' })).toThrow(ConfigError);
  });
  it('a split process needs the shared services, and a gateway the shared pepper, token and RPC URLs', () => {
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'runtime', ...env }))).not.toThrow();
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'runtime' }))).toThrow(StartupError);
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'gateway', ...env }))).toThrow(/set ANM_TEST_RPC_URL, ANM_RPC_URL, ANMPAY_KEY_PEPPER, ANMPAY_OPERATOR_TOKEN/);
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'indexer', ...env }))).toThrow(/set ANM_TEST_RPC_URL, ANM_RPC_URL \(/);
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'marketplace' }))).toThrow(/set DATABASE_URL, NATS_URL \(/);
    // The whole core in one process: the embedded defaults are fine, with or without the marketplace.
    expect(() => checkRoles(loadConfig({}))).not.toThrow();
    expect(() => checkRoles(loadConfig({ ANMPAY_ROLES: 'gateway,runtime,indexer' }))).not.toThrow();
  });
});
