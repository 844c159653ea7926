import type { BlockTx, PoolTx } from './block.ts';

/**
 * Accounts of one devnet chain: balances and nonces, and what executing a transaction does
 * to them (docs/devnet.md "State rules"). Reorgs and the chain log's replay undo and redo
 * these steps exactly, so they live apart from mining and admission.
 */
export class Ledger {
  private readonly balances = new Map<string, bigint>();
  private readonly nonces = new Map<string, bigint>();

  balance(address: string): bigint {
    return this.balances.get(address) ?? 0n;
  }

  /** Transactions of the sender included so far, successful or failed. */
  nonce(address: string): bigint {
    return this.nonces.get(address) ?? 0n;
  }

  /** Adds to a balance (the faucet: minted, outside blocks); returns the new balance. */
  credit(address: string, amount: bigint): bigint {
    const balance = this.balance(address) + amount;
    this.balances.set(address, balance);
    return balance;
  }

  /** Failed = the sender cannot cover outputs + fee: only the nonce moves. Fees are burned. */
  execute(p: PoolTx): BlockTx {
    this.nonces.set(p.from, this.nonce(p.from) + 1n);
    const balance = this.balance(p.from);
    if (balance < p.total) return { pool: p, status: 'failed', error: 'insufficient_balance' };
    this.balances.set(p.from, balance - p.total);
    for (const o of p.tx.outputs) this.credit(o.to, o.amount);
    return { pool: p, status: 'success', error: null };
  }

  /** Exact inverse of execute; a block's transactions are reverted last first. */
  revert(t: BlockTx): void {
    const p = t.pool;
    this.nonces.set(p.from, this.nonce(p.from) - 1n);
    if (t.status === 'success') {
      for (const o of p.tx.outputs) this.credit(o.to, -o.amount);
      this.credit(p.from, p.total);
    }
  }
}
