/**
 * Payout addresses as the dashboard manages them (DESIGN §7): one per mode, verified by a
 * signature over a challenge (`anmpay payout verify --challenge <c> --wallet <w>` prints it).
 * A new address clears the verification and gets a new challenge.
 */
import { checkPayoutProof, decodeAddress, NETWORKS } from '../../machines/chain/index.ts';
import type { Db } from '../../storage/db.ts';
import { verifySignature } from '../chain/codec/verify.ts';
import { TerminalError } from '../errors.ts';
import { randomId, type Mode } from './secrets.ts';

export interface PayoutView {
  mode: Mode;
  address: string | null;
  verified: boolean;
  verified_at: string | null;
  /** What to sign; null when verified or when there is no address. */
  challenge: string | null;
}

export class PayoutAddresses {
  constructor(private readonly db: Db) {}

  async get(merchant: string, mode: Mode): Promise<PayoutView> {
    const { rows } = await this.db.query<{ address: string; verified_at: Date | null; challenge: string | null }>(
      `SELECT address, verified_at, challenge FROM payout_addresses WHERE merchant = $1 AND mode = $2`,
      [merchant, mode],
    );
    const r = rows[0];
    if (!r) return { mode, address: null, verified: false, verified_at: null, challenge: null };
    const verified = r.verified_at !== null;
    return { mode, address: r.address, verified, verified_at: verified ? new Date(r.verified_at!).toISOString() : null, challenge: verified ? null : r.challenge };
  }

  /** Sets the address of a mode (an address of that mode's network) and issues a challenge. */
  async set(merchant: string, mode: Mode, address: string): Promise<PayoutView> {
    let canonical: string;
    try {
      canonical = decodeAddress(address.trim(), NETWORKS[mode].hrp).address;
    } catch {
      throw new TerminalError('invalid_body', `Not an address of the ${mode} network (${NETWORKS[mode].hrp}1…).`);
    }
    await this.db.query(
      `INSERT INTO payout_addresses (merchant, mode, address, challenge) VALUES ($1, $2, $3, $4)
       ON CONFLICT (merchant, mode) DO UPDATE SET address = EXCLUDED.address, wallet_secret = NULL, verified_at = NULL, challenge = EXCLUDED.challenge`,
      [merchant, mode, canonical, randomId('chl_')],
    );
    return this.get(merchant, mode);
  }

  /** Checks a proof against the open challenge; marks the address verified when it holds. */
  async verify(merchant: string, mode: Mode, proof: string): Promise<PayoutView> {
    const cur = await this.get(merchant, mode);
    if (cur.verified) return cur;
    if (!cur.address || !cur.challenge) throw new TerminalError('not_found', 'Set a payout address first.');
    if (!checkPayoutProof(proof, cur.challenge, cur.address, mode, verifySignature)) {
      throw new TerminalError('invalid_body', 'The signature does not prove this address for this challenge.');
    }
    await this.db.query(`UPDATE payout_addresses SET verified_at = now(), challenge = NULL WHERE merchant = $1 AND mode = $2 AND challenge = $3`, [merchant, mode, cur.challenge]);
    return this.get(merchant, mode);
  }
}
