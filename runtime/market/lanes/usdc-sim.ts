/**
 * The embedded USDC lane: a simulated EIP-3009 token in the database (DESIGN §5 "Lanes").
 * Balances, `authorizationState` and `transferWithAuthorization` behave as the token's do;
 * signatures are real EIP-712 checks (eip3009.ts). A faucet funds addresses for tests and
 * the CLI.
 */
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { Db, Queryable } from '../../../storage/db.ts';
import { USDC_TOKEN } from '../../../machines/money/market.ts';
import type { Authorization } from './eip3009.ts';
import type { AuthorizationState, SettleResult, UsdcLedger, UsdcToken } from './usdc-ledger.ts';

export type { SettleResult } from './usdc-ledger.ts';

const lower = (a: string): string => a.toLowerCase();

export class UsdcSimLedger implements UsdcLedger {
  readonly signers: readonly string[] = [];

  /** It stands in for the configured token (USDC on Base unless configured), under that token's domain. */
  constructor(
    private readonly db: Db,
    readonly token: UsdcToken = USDC_TOKEN,
  ) {}

  async fund(address: string, amount: bigint): Promise<bigint> {
    if (amount <= 0n) throw new RangeError('fund a positive amount');
    const { rows } = await this.db.query<{ balance: string }>(
      `INSERT INTO usdc_balances (address, balance) VALUES ($1, $2::numeric)
       ON CONFLICT (address) DO UPDATE SET balance = usdc_balances.balance + EXCLUDED.balance RETURNING balance::text`,
      [lower(address), amount.toString()],
    );
    return BigInt(rows[0]?.balance ?? '0');
  }

  async balanceOf(address: string, q: Queryable = this.db): Promise<bigint> {
    const { rows } = await q.query<{ balance: string }>(`SELECT balance::text FROM usdc_balances WHERE address = $1`, [lower(address)]);
    return BigInt(rows[0]?.balance ?? '0');
  }

  /** EIP-3009 `authorizationState(authorizer, nonce)`: true once used. */
  async authorizationState(authorizer: string, nonce: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`SELECT 1 FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`, [lower(authorizer), lower(nonce)]);
    return rowCount > 0;
  }

  async authorizationStates(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): Promise<AuthorizationState[]> {
    const { rows } = await this.db.query<{ used: boolean; balance: string | null }>(
      `SELECT EXISTS (SELECT 1 FROM usdc_authorizations u WHERE u.authorizer = x.authorizer AND u.nonce = x.nonce) AS used,
              (SELECT b.balance::text FROM usdc_balances b WHERE b.address = x.authorizer) AS balance
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(authorizer, nonce, i) ORDER BY x.i`,
      [auths.map((a) => lower(a.authorizer)), auths.map((a) => lower(a.nonce))],
    );
    return rows.map((r) => ({ used: r.used, balance: BigInt(r.balance ?? '0') }));
  }

  /**
   * `transferWithAuthorization` of an already verified authorization, in one transaction:
   * the nonce is used once; the same authorization again returns its transaction (settle is
   * idempotent per nonce); a different use of a used nonce, or a short balance, fails.
   */
  async transferWithAuthorization(a: Authorization, nowS: number): Promise<SettleResult> {
    if (BigInt(a.validBefore) <= BigInt(nowS)) return { ok: false, reason: 'invalid_exact_evm_payload_authorization_valid_before' };
    const tx = `0x${bytesToHex(keccak_256(utf8ToBytes(`usdc-sim:${lower(a.from)}:${lower(a.nonce)}`)))}`;
    return this.db.tx(async (q) => {
      // The nonce is claimed first: a concurrent settle of the same authorization waits on this
      // row and then finds it, instead of both debiting and one failing on the key.
      const claimed = await q.query(
        `INSERT INTO usdc_authorizations (authorizer, nonce, recipient, value, tx_hash) VALUES ($1, $2, $3, $4::numeric, $5) ON CONFLICT DO NOTHING`,
        [lower(a.from), lower(a.nonce), lower(a.to), a.value, tx],
      );
      if (claimed.rowCount === 0) {
        const used = await q.query<{ tx_hash: string; recipient: string; value: string }>(
          `SELECT tx_hash, recipient, value::text FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`,
          [lower(a.from), lower(a.nonce)],
        );
        const prior = used.rows[0];
        return prior && prior.recipient === lower(a.to) && prior.value === a.value ? { ok: true, tx: prior.tx_hash, replay: true } : { ok: false, reason: 'invalid_exact_evm_nonce_already_used' };
      }
      const debit = await q.query(`UPDATE usdc_balances SET balance = balance - $2::numeric WHERE address = $1 AND balance >= $2::numeric`, [lower(a.from), a.value]);
      if (debit.rowCount === 0) {
        // A short balance leaves the nonce unused, as the token's revert would.
        await q.query(`DELETE FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`, [lower(a.from), lower(a.nonce)]);
        return { ok: false, reason: 'invalid_exact_evm_insufficient_balance' };
      }
      await q.query(
        `INSERT INTO usdc_balances (address, balance) VALUES ($1, $2::numeric) ON CONFLICT (address) DO UPDATE SET balance = usdc_balances.balance + EXCLUDED.balance`,
        [lower(a.to), a.value],
      );
      return { ok: true, tx, replay: false };
    });
  }
}
