/**
 * Starts `execute-child.ts`, a marketplace in its own process over the parent's backends,
 * for the routed-execution fault tests: resolves its URL once it listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export function startChild(env: Record<string, string>): { p: ChildProcess; url: Promise<string> } {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/market/execute-child.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise<string>((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('http'));
      if (line) resolve(line.trim());
    });
    p.once('exit', () => reject(new Error('marketplace child exited before listening')));
  });
  return { p, url };
}
