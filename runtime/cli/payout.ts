/**
 * `anmpay payout set --merchant <id> --mode test|live --address <addr> [--json]` prints
 * {"merchant","mode","payout_address"}. Live intents pay the merchant's own address.
 * `anmpay payout verify --challenge <c> --wallet <file> [--json]` prints the proof the dashboard
 * asks for (-q: only it); {"address","challenge","signature"} with --json. Offline: the wallet's
 * key signs here and never leaves.
 */
import { z } from 'zod';
import { signPayoutProof } from '../../machines/chain/index.ts';
import { readWalletFile } from '../chain/codec/keys.ts';
import { parse, str, usageError } from './args.ts';
import { usageOf } from './help.ts';
import { expectShape } from './env.ts';
import { opsCall } from './ops-client.ts';
import { runCommand, type CommandResult } from './output.ts';

const USAGE = usageOf('payout', 'set');
const VERIFY_USAGE = usageOf('payout', 'verify');
const result = z.strictObject({ merchant: z.string(), mode: z.string(), payout_address: z.string() });

export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  if (sub === 'verify') return verify(rest);
  if (sub !== 'set') throw usageError(`unknown subcommand ${JSON.stringify(sub ?? '')}`, USAGE);
  const a = parse(rest, { merchant: { type: 'string' }, mode: { type: 'string' }, address: { type: 'string' } }, USAGE);
  const merchant = str(a, 'merchant');
  const mode = str(a, 'mode');
  const address = str(a, 'address');
  if (!merchant || !address) throw usageError('--merchant and --address are required', USAGE);
  if (mode !== 'test' && mode !== 'live') throw usageError('--mode test|live is required', USAGE);
  const r = expectShape(result, await opsCall('POST', `/ops/api/merchants/${encodeURIComponent(merchant)}/payout`, { mode, address }), 'payout set');
  return { data: r, text: `${r.mode} payout address of ${r.merchant}: ${r.payout_address}` };
}

async function verify(rest: string[]): Promise<CommandResult> {
  const a = parse(rest, { challenge: { type: 'string' }, wallet: { type: 'string' } }, VERIFY_USAGE);
  const challenge = str(a, 'challenge');
  const file = str(a, 'wallet');
  if (!challenge || !file) throw usageError('--challenge and --wallet are required', VERIFY_USAGE);
  const w = await readWalletFile(file);
  const signature = signPayoutProof(challenge, w.address, w.secretKey, w.publicKey, globalThis.crypto.getRandomValues(new Uint8Array(32)));
  w.secretKey.fill(0);
  return { data: { address: w.address, challenge, signature }, text: signature, quiet: signature };
}
