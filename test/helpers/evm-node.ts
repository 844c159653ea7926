/**
 * A local EVM node for tests: Hardhat's network (EDR, prebuilt napi binaries from npm) as a
 * child process serving JSON-RPC over HTTP on a free loopback port. Chain id 8453 by default:
 * the lane's network is eip155:8453 and x402 signers take the EIP-712 chain id from it. Its
 * first accounts are Hardhat's well-known funded development keys.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';

/** Hardhat's default development accounts #0..#2 (public test keys, funded with 10,000 ETH each). */
export const DEV_KEYS: readonly Hex[] = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3d4e7e3a3a2a1c2d',
];

export interface EvmNode {
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

/** Hardhat runs only as the project's own install: its working directory is the repository. */
const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..');

export async function startEvmNode(opts: { chainId?: number; timeoutMs?: number } = {}): Promise<EvmNode> {
  const chainId = opts.chainId ?? 8453;
  // The config (and the caches Hardhat keeps beside it) live in a scratch directory, never in the repository.
  const dir = mkdtempSync(path.join(tmpdir(), 'anmpay-evm-'));
  const config = path.join(dir, 'hardhat.config.cjs');
  writeFileSync(config, `module.exports = { networks: { hardhat: { chainId: ${chainId} } } };\n`);
  const cli = createRequire(import.meta.url).resolve('hardhat/internal/cli/cli.js');
  const child: ChildProcess = spawn(process.execPath, [cli, '--config', config, 'node', '--hostname', '127.0.0.1', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the EVM node did not start in time:\n${output}`)), opts.timeoutMs ?? 30_000);
      const read = (chunk: Buffer): void => {
        output += chunk.toString();
        const m = /JSON-RPC server at (http:\/\/[^\s/]+)\//.exec(output);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      child.stdout?.on('data', read);
      child.stderr?.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the EVM node exited (${code}):\n${output}`));
      });
    });
    // Keep draining its log (one line per request) so the pipe never fills.
    child.stdout?.removeAllListeners('data').resume();
    child.stderr?.removeAllListeners('data').resume();
    return { url, chainId, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
