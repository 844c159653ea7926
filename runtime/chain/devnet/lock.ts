/**
 * One writer per devnet directory: two processes appending to one chain log would interleave
 * two chains. The lock is a `LOCK` file holding the owner's pid, made with O_EXCL; a lock
 * whose process is gone (killed, crashed) is taken over.
 */
import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';

/** Directories this process holds: a second open in the same process is refused too. */
const held = new Set<string>();

export class DevnetLockError extends Error {
  override readonly name = 'DevnetLockError';
}

export class DevnetLock {
  private constructor(private readonly file: string) {}

  static take(dir: string): DevnetLock {
    const file = path.resolve(dir, 'LOCK');
    if (held.has(file)) throw new DevnetLockError(`the devnet chain in ${dir} is already open in this process`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx');
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        held.add(file);
        return new DevnetLock(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
        if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) {
          throw new DevnetLockError(`the devnet chain in ${dir} is in use by process ${owner}; stop it or use another data directory`);
        }
        rmSync(file, { force: true });
      }
    }
    throw new DevnetLockError(`could not lock the devnet chain in ${dir}`);
  }

  release(): void {
    if (!held.delete(this.file)) return;
    rmSync(this.file, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
