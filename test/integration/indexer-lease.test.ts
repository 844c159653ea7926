import { describe, expect, it } from 'vitest';
import { releaseLease, tryLease } from '../../runtime/chain/indexer/lease.ts';
import { backendFactories } from '../helpers/backends.ts';

// Issue 4: one active indexer per network across processes (lease), the others standing by.
describe.each(backendFactories)('indexer lease on %s', (_name, open) => {
  it('one holder per network; a standby takes over only after expiry or release', async () => {
    const b = await open();
    try {
      expect(await tryLease(b.db, 'test', 'proc-a', 10_000)).toBe(true);
      expect(await tryLease(b.db, 'test', 'proc-b', 10_000)).toBe(false);
      expect(await tryLease(b.db, 'live', 'proc-b', 10_000)).toBe(true); // networks are independent
      expect(await tryLease(b.db, 'test', 'proc-a', 10_000)).toBe(true); // renewal
      await releaseLease(b.db, 'test', 'proc-a');
      expect(await tryLease(b.db, 'test', 'proc-b', 200)).toBe(true);
      expect(await tryLease(b.db, 'test', 'proc-a', 10_000)).toBe(false);
      await new Promise((r) => setTimeout(r, 300)); // proc-b stops renewing: its lease runs out
      expect(await tryLease(b.db, 'test', 'proc-a', 10_000)).toBe(true);
    } finally {
      await b.close();
    }
  });
});
