import type { Db } from '../../../storage/db.ts';

/**
 * One active indexer per network across processes: a row lease renewed while held. A holder
 * that dies stops renewing and a standby takes over once the lease runs out.
 */
export async function tryLease(db: Db, network: string, holder: string, ttlMs: number): Promise<boolean> {
  const { rows } = await db.query<{ holder: string }>(
    `INSERT INTO chain_leases (network, holder, expires_at)
     VALUES ($1, $2, now() + ($3::double precision * interval '1 millisecond'))
     ON CONFLICT (network) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE chain_leases.holder = EXCLUDED.holder OR chain_leases.expires_at < now()
     RETURNING holder`,
    [network, holder, ttlMs],
  );
  return rows[0]?.holder === holder;
}

export async function releaseLease(db: Db, network: string, holder: string): Promise<void> {
  await db.query(`DELETE FROM chain_leases WHERE network = $1 AND holder = $2`, [network, holder]);
}
