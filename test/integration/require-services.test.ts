import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Issue 2: with REQUIRE_SERVICES=1 a missing PostgreSQL or NATS fails the run, not a skip.
const run = (env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', '-e', "const m = await import('./test/global-setup.ts'); await m.default();"], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('REQUIRE_SERVICES', () => {
  it('fails when PostgreSQL is unreachable', () => {
    const r = run({ REQUIRE_SERVICES: '1', DATABASE_URL: 'postgres://root@127.0.0.1:1/test' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/REQUIRE_SERVICES=1 but PostgreSQL/);
  });
  it('fails when NATS is unreachable', () => {
    const r = run({ REQUIRE_SERVICES: '1', NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/NATS JetStream/);
  });
  it('without it, falls back to the embedded backends and says so', () => {
    const r = run({ REQUIRE_SERVICES: '0', DATABASE_URL: 'postgres://root@127.0.0.1:1/test' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/embedded PGlite \+ in-process bus \(real services unreachable/);
  });
});
