import { mkdir, open, readFile, rm, stat, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * One process per data directory: the embedded store (PGlite) and the devnet's chain files
 * belong to whoever holds `<dir>/anmpay.lock`. Node has no portable flock, so the file says
 * who holds it (pid, host) and the holder touches it every few seconds. A lock is stale when
 * its process is gone (same host) or it has not been touched for `STALE_MS` (any host: a
 * container restarted with the same volume has a new hostname and the old pid means nothing).
 */
const FILE = 'anmpay.lock';
const TOUCH_MS = 5_000;
const STALE_MS = 30_000;

export interface DataDirLock {
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** Thrown when another live process holds the directory; the message is one line for the operator. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: Holder,
  ) {
    const who = holder.pid > 0 ? `another anmpay process (pid ${holder.pid} on ${holder.host}, since ${holder.since})` : 'another anmpay process';
    super(`${who} is using the data directory ${dir}; stop it, or set ANMPAY_DATA_DIR to another directory`);
  }
}

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const abs = path.resolve(dir);
  await mkdir(abs, { recursive: true });
  const file = path.join(abs, FILE);
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(file, 'wx', 0o644);
      await fh.writeFile(`${JSON.stringify(me)}\n`);
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 20) throw err;
    }
    const held = await current(file);
    if (held && !(await stale(file, held))) throw new DataDirBusyError(abs, held);
    if (held) await removeStale(file);
  }
  const touch = setInterval(() => {
    const now = new Date();
    void utimes(file, now, now).catch(() => undefined);
  }, TOUCH_MS);
  touch.unref();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(touch);
      const held = await current(file);
      if (held?.pid === me.pid && held.host === me.host) await rm(file, { force: true });
    },
  };
}

/**
 * Removes a stale lock under a guard directory (mkdir is atomic), re-checking under the guard:
 * without it, a second process that also saw the stale lock could remove the fresh one the
 * first had just created in its place.
 */
async function removeStale(file: string): Promise<void> {
  const guard = `${file}.steal`;
  try {
    await mkdir(guard);
  } catch {
    const age = await stat(guard).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > 10_000) await rm(guard, { recursive: true, force: true });
    else await new Promise((r) => setTimeout(r, 100));
    return;
  }
  try {
    const held = await current(file);
    if (held && (await stale(file, held))) await rm(file, { force: true });
  } finally {
    await rm(guard, { recursive: true, force: true });
  }
}

async function current(file: string): Promise<Holder | null> {
  try {
    const h = JSON.parse(await readFile(file, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? { pid: h.pid, host: h.host, since: String(h.since ?? '?') } : { pid: 0, host: '?', since: '?' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // Half-written by a holder that died while creating it: judged by its age alone.
    return { pid: 0, host: '?', since: '?' };
  }
}

async function stale(file: string, h: Holder): Promise<boolean> {
  const touched = await stat(file).then((s) => s.mtimeMs, () => 0);
  if (Date.now() - touched > STALE_MS) return true;
  if (h.host !== hostname()) return false;
  if (h.pid === process.pid) return true;
  return !alive(h.pid);
}

function alive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
