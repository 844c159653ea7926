/**
 * `npm start` as a child process (node + tsx + bin/start.ts, as package.json runs it), for the
 * tests that need whole processes: a second instance refused, roles split over shared services.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export class ServiceProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ? null : code)));
  }

  static spawn(name: string, env: Record<string, string>): ServiceProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ServiceProcess(name, child);
  }

  /** Resolves with the first log message matching `re`; rejects if the process exits first or on timeout. */
  async waitForLog(re: RegExp, timeoutMs = 45_000): Promise<string> {
    const start = Date.now();
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      // Whole lines only: the last one may still be arriving.
      for (const line of this.stdout.split('\n').slice(0, -1)) {
        const msg = line.startsWith('{') ? logMessage(line) : line;
        if (msg !== undefined && re.test(msg)) return msg;
      }
      if (exited) throw new Error(`${this.name} exited before logging ${re}: ${this.stderr.slice(-2000)}`);
      if (Date.now() - start > timeoutMs) throw new Error(`${this.name}: no log matching ${re} in ${timeoutMs} ms; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The merchant API's URL once it listens (LOG_LEVEL must let info through). */
  async url(): Promise<string> {
    const msg = await this.waitForLog(/^merchant API listening on /);
    return msg.replace('merchant API listening on ', '');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

function logMessage(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { msg?: string }).msg;
  } catch {
    return undefined;
  }
}
