import { describe, expect, it } from 'vitest';
import { releaseLease, tryLease } from '../../runtime/chain/indexer/lease.ts';
import { backendFactories, waitFor } from '../helpers/backends.ts';

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
      // Leases long enough that no slow machine sees one run out before the next statement.
      expect(await tryLease(b.db, 'test', 'proc-b', 10_000)).toBe(true);
      expect(await tryLease(b.db, 'test', 'proc-a', 10_000)).toBe(false);
      // proc-b's last renewal is a short one, then it stops renewing: its lease runs out.
      expect(await tryLease(b.db, 'test', 'proc-b', 1)).toBe(true);
      await waitFor(() => tryLease(b.db, 'test', 'proc-a', 10_000), 10_000, 'proc-a to take over the lease proc-b let run out');
    } finally {
      await b.close();
    }
  });
});
