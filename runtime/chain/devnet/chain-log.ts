/**
 * The devnet's durable chain (docs/adr/0019-devnet-persistence.md): one append-only
 * JSON Lines file per network, `<dir>/chain.jsonl`, holding every state change in order.
 * Replaying it rebuilds the exact chain (same genesis, same hashes, same mempool). The file
 * is created whole (temporary file, fsync, rename) so it always starts with its genesis; a
 * record cut short by a crash is the only damage an append can leave, and opening drops it.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { DevnetLock } from './lock.ts';

/** One line of the log. Amounts are decimal strings (JSON has no bigint). */
export type ChainRecord =
  | { op: 'genesis'; chain_id: number; timestamp: number; hash: string }
  /** A transaction accepted into the mempool: its signed bytes as sent. */
  | { op: 'tx'; raw: string }
  /** A mined block: which pending transactions it took (in order) and which stale ones the pass discarded. */
  | { op: 'block'; height: number; timestamp: number; serial: number; hash: string; txs: string[]; discarded: string[] }
  | { op: 'faucet'; address: string; amount: string }
  /** The unwinding half of dev_reorg; the blocks it mines follow as `block` records. */
  | { op: 'reorg'; depth: number; drop: string[] };

export class ChainLogError extends Error {
  override readonly name = 'ChainLogError';
}

export const CHAIN_LOG_FILE = 'chain.jsonl';

export class ChainLog {
  private fd: number | undefined;

  private constructor(
    readonly file: string,
    readonly records: readonly ChainRecord[],
    private readonly lock: DevnetLock,
    fd: number,
  ) {
    this.fd = fd;
  }

  /**
   * Opens (or creates, starting with `genesis()`) the log in `dir` and returns it with every
   * record it holds. Refuses a directory another live process has open.
   */
  static open(dir: string, genesis: () => ChainRecord & { op: 'genesis' }): ChainLog {
    mkdirSync(dir, { recursive: true });
    const lock = DevnetLock.take(dir);
    try {
      const file = path.join(dir, CHAIN_LOG_FILE);
      if (!existsSync(file)) createWhole(file, genesis());
      const records = readRecords(file);
      return new ChainLog(file, records, lock, openSync(file, 'a'));
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /**
   * Appends one record. Every record reaches the kernel before the call returns (a killed
   * process loses nothing); `durable` ones are also fsync'd. Blocks are fsync'd by the caller
   * once per mining call (`sync`), so a power cut loses at most the mempool admissions since
   * the last block.
   */
  append(record: ChainRecord, durable: boolean): void {
    if (this.fd === undefined) throw new ChainLogError(`${this.file} is closed`);
    writeSync(this.fd, `${JSON.stringify(record)}\n`);
    if (durable) fsyncSync(this.fd);
  }

  /** Flushes everything appended so far to disk. */
  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
    this.lock.release();
  }
}

function createWhole(file: string, first: ChainRecord): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(first)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  syncDir(path.dirname(file));
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  } finally {
    closeSync(fd);
  }
}

function readRecords(file: string): ChainRecord[] {
  const buf = readFileSync(file);
  const end = buf.lastIndexOf(0x0a) + 1;
  if (end < buf.length) {
    // A write cut short by a crash: the record never completed, so it never happened.
    const fd = openSync(file, 'r+');
    try {
      ftruncateSync(fd, end);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  const lines = buf.subarray(0, end).toString('utf8').split('\n');
  lines.pop();
  return lines.map((line, i) => {
    try {
      const r = JSON.parse(line) as ChainRecord;
      if (typeof r !== 'object' || r === null || typeof r.op !== 'string') throw new Error('no "op"');
      return r;
    } catch (e) {
      throw new ChainLogError(`${file} line ${i + 1} is not a chain record (${e instanceof Error ? e.message : String(e)}); move the file away to start a new chain`);
    }
  });
}
