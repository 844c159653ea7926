/**
 * The ANM lane (DESIGN §3, §5 "Lanes"): legs are ordinary signed transfers checked against the
 * node (the devnet, or any node speaking its JSON-RPC). Verify adds to the leg's own checks
 * (anm-leg.ts) what only the chain knows: the transfer not already submitted or on chain, its
 * nonce not taken by another transaction, and the payer's balance for the amount plus the
 * chain fee. Settle submits it; whether it counts as settled is the chain's to say (the
 * purchase follows the indexer's signals; the facilitator waits for the receipt).
 */
import { RpcError } from '../../chain/rpc-errors.ts';
import type { AnmRpcClient } from '../../chain/rpc-client.ts';
import type { Receipt } from '../../chain/rpc-types.ts';
import type { AnmNonceHolds } from '../anm-nonce-holds.ts';
import { asExactAnmPayload, checkAnmAccepted, checkTransfer, type AnmCheck, type AnmExpected, type CheckedTransfer } from './anm-leg.ts';

export type AnmNode = Pick<AnmRpcClient, 'getNonce' | 'getBalance' | 'getTransactionByHash' | 'getTransactionReceipt' | 'sendRawTransaction' | 'blockNumber'>;

export type AnmSettle = { ok: true; tx: string; replay: boolean } | { ok: false; reason: string; message: string };

const NONCE_USED = 'invalid_exact_anm_nonce_already_used';

export class AnmLane {
  constructor(
    readonly rpc: AnmNode,
    /** Nonces held by open purchases (ADR 0043): what the node cannot know of transfers still waiting. */
    readonly holds: AnmNonceHolds,
    private readonly clock: () => number = Date.now,
    /** How long the facilitator's settle waits for the transfer's receipt. */
    readonly inclusionWaitMs = 15_000,
  ) {}

  nowS(): number {
    return Math.floor(this.clock() / 1000);
  }

  /**
   * Requirements, payload, the transfer, then the node. `allowSubmitted` lets a transfer the
   * node already knows through (settling it again is answered from the chain, idempotent).
   * `spend` is what the payer must hold (default: this transfer's amount plus its fee; null:
   * the caller checks the balance, once for several transfers).
   */
  async verify(accepted: Record<string, unknown> | undefined, raw: unknown, e: AnmExpected, opts: { allowSubmitted?: boolean; spend?: bigint | null } = {}): Promise<AnmCheck & { known?: boolean }> {
    const accept = checkAnmAccepted(accepted, e.scheme);
    if (accept) return accept;
    const payload = asExactAnmPayload(raw);
    if (!payload) return { ok: false, reason: 'invalid_payload', message: 'payload is not {transaction: hex of a signed ANM transfer}' };
    const c = checkTransfer(payload, e, this.nowS());
    if (!c.ok) return c;
    const t = c.transfer;
    // Asked at once, one round trip (one batch with a batching client) for every check; the
    // price is a nonce read that goes unused, or that fails the check, for the rare transfer the
    // node already has. `pending` counts the payer's included and gap-free pending transactions.
    const [found, next] = await Promise.all([this.rpc.getTransactionByHash(t.hash), this.rpc.getNonce(t.payer, 'pending')]);
    const known = found !== null;
    if (known) return opts.allowSubmitted ? { ...c, known } : { ok: false, reason: NONCE_USED, message: 'this transfer was already submitted', payer: t.payer };
    if (t.tx.nonce < next) return { ok: false, reason: NONCE_USED, message: `nonce ${t.tx.nonce} of the payer is already used`, payer: t.payer };
    const spend = opts.spend === undefined ? t.tx.outputs[0]!.amount + t.tx.fee : opts.spend;
    if (spend !== null && (await this.rpc.getBalance(t.payer)) < spend) return { ok: false, reason: 'invalid_exact_anm_insufficient_balance', message: 'the payer balance is below the amount and chain fee', payer: t.payer };
    return { ...c, known };
  }

  /** Submits the transfer; one the node already has is answered with its hash (idempotent per transfer). */
  async settle(t: Pick<CheckedTransfer, 'hash' | 'hex'>): Promise<AnmSettle> {
    if (await this.rpc.getTransactionByHash(t.hash)) return { ok: true, tx: t.hash, replay: true };
    try {
      return { ok: true, tx: await this.rpc.sendRawTransaction(t.hex), replay: false };
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      if (e.reason === 'already_known') return { ok: true, tx: t.hash, replay: true };
      if (e.reason === 'nonce_too_low' || e.reason === 'nonce_pending') return { ok: false, reason: NONCE_USED, message: e.message };
      return { ok: false, reason: `invalid_exact_anm_${e.reason}`, message: e.message };
    }
  }

  /** The receipt once the transfer is in a block, or null when `inclusionWaitMs` passed first. */
  async waitIncluded(hash: string, pollMs = 100): Promise<Receipt | null> {
    const until = Date.now() + this.inclusionWaitMs;
    for (;;) {
      const r = await this.rpc.getTransactionReceipt(hash);
      if (r || Date.now() >= until) return r;
      await new Promise((res) => setTimeout(res, pollMs));
    }
  }
}
