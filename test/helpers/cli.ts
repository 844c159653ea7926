/**
 * Runs the `anmpay` binary as users do (a child process through tsx), for the tests that
 * drive the service, the devnet and wallets through the CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return runProcess(process.execPath, ['--import', 'tsx', 'bin/anmpay.js', ...args], env);
}

/** Runs a program to its end from the repository root and collects its output. */
export function runProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `anmpay <args> --json`: the last line of its output as JSON; rejects on a non-zero exit or no JSON. */
export async function cliJson<T = Record<string, unknown>>(args: readonly string[], env: NodeJS.ProcessEnv): Promise<T> {
  const r = await runCli([...args, '--json'], env);
  if (r.code !== 0) throw new Error(`anmpay ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
  try {
    return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as T;
  } catch {
    throw new Error(`anmpay ${args.join(' ')}: no JSON (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  }
}
