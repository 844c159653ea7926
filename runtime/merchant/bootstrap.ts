/**
 * First start on an empty store: treasury addresses per network and a demo merchant whose
 * dashboard login and test keys are printed once (DESIGN §6).
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Db } from '../../storage/db.ts';
import { generateWallet } from '../chain/codec/keys.ts';
import type { CreatedMerchant, Merchants } from './merchants.ts';
import type { Mode } from './secrets.ts';

export type Treasury = Record<Mode, string>;

/** The demo merchant's widget origins: any local port, test mode only. */
export const DEMO_ORIGINS = ['http://127.0.0.1:*', 'http://localhost:*'] as const;

// Any constant; the same in every process that bootstraps.
const BOOTSTRAP_LOCK = 0x616e6d62;

/** Treasury address per network, generated once and kept in `settings`. */
export async function ensureTreasury(db: Db): Promise<Treasury> {
  const out = {} as Treasury;
  for (const mode of ['test', 'live'] as const) {
    const key = `treasury.${mode}`;
    let row = (await db.query<{ value: { address: string } }>(`SELECT value FROM settings WHERE key = $1`, [key])).rows[0];
    if (!row) {
      const w = generateWallet(mode);
      await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING`, [
        key,
        JSON.stringify({ address: w.address, secret_key: bytesToHex(w.secretKey) }),
      ]);
      w.secretKey.fill(0);
      row = (await db.query<{ value: { address: string } }>(`SELECT value FROM settings WHERE key = $1`, [key])).rows[0]!;
    }
    out[mode] = row.value.address;
  }
  return out;
}

/** Creates the demo merchant when no merchant exists yet; returns it only to the process that did. */
export async function ensureDemoMerchant(db: Db, merchants: Merchants): Promise<CreatedMerchant | null> {
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
    const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM merchants`);
    if ((rows[0]?.n ?? 0) > 0) return null;
    // Loopback pages on any port may embed its TEST checkout so the widget works out of the box
    // locally; live intents never honour these entries (runtime/merchant/origins.ts).
    return merchants.createIn(q, { name: 'Demo Shop', email: 'demo@anmpay.local', allowed_origins: [...DEMO_ORIGINS] });
  });
}

export function demoBanner(m: CreatedMerchant, baseUrl: string): string {
  return [
    '',
    '  ANM Pay: created a demo merchant (shown once, keep it)',
    `    merchant            ${m.merchant_id}`,
    `    dashboard           ${baseUrl}/dashboard`,
    `    login               ${m.dashboard.email} / ${m.dashboard.password}`,
    `    test secret key     ${m.keys.test.secret}`,
    `    test publishable    ${m.keys.test.publishable}`,
    `    widget origins      ${DEMO_ORIGINS.join(' ')} (test mode only)`,
    `    docs                ${baseUrl}/docs`,
    `    operator console    ${baseUrl}/ops`,
    '',
    '  To try the API (README "A first payment"), in another shell:',
    `    export ANMPAY_API_KEY=${m.keys.test.secret}`,
    '',
  ].join('\n');
}
