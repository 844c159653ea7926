/**
 * Starts `execute-child.ts`, a marketplace in its own process over the parent's backends,
 * for the routed-execution fault tests: resolves its URL once it listens; `printed(line)`
 * resolves once the child wrote that line (where a fault hook stopped it).
 */
import { spawn, type ChildProcess } from 'node:child_process';

export function startChild(env: Record<string, string>): { p: ChildProcess; url: Promise<string>; printed: (line: string) => Promise<void> } {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/market/execute-child.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const printed = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!out.split('\n').includes(line)) return;
        p.stdout.off('data', check);
        resolve();
      };
      p.stdout.on('data', check);
      p.once('exit', () => reject(new Error(`marketplace child exited before printing ${line}`)));
      check();
    });
  const url = new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = out.split('\n').find((l) => l.startsWith('http'));
      if (line) resolve(line.trim());
    };
    p.stdout.on('data', check);
    p.once('exit', () => reject(new Error('marketplace child exited before listening')));
  });
  return { p, url, printed };
}
