/**
 * `anmpay usdc create|fund|balance`: keys and play money on the marketplace's simulated USDC
 * ledger, through its faucet routes (gateway/market/usdc-faucet.ts) on ANMPAY_MARKET_URL.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { parseAtomicDecimal } from '../../machines/money/market.ts';
import { parse, positionals, str, type ParsedArgs } from './args.ts';
import { expectShape, marketUrl, serviceJson, walletsDir } from './env.ts';
import { createEvmKeyFile } from './evm-key-file.ts';
import { usageOf } from './help.ts';
import { CliError, type CommandResult } from './output.ts';
import { groupMain } from './subcommands.ts';

const USAGE = { create: usageOf('usdc', 'create'), fund: usageOf('usdc', 'fund'), balance: usageOf('usdc', 'balance') };
const balanceDoc = z.object({ address: z.string(), balance_atomic: z.string(), balance: z.string() });

/** Entry from the dispatcher in main.ts. */
export const main = groupMain('usdc', {
  create: (rest) => create(parse(rest, { out: { type: 'string' } }, USAGE.create)),
  fund: (rest) => fund(parse(rest, {}, USAGE.fund)),
  balance: (rest) => balance(parse(rest, {}, USAGE.balance)),
});

function address(raw: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new CliError('bad_address', `${JSON.stringify(raw)} is not a 0x-prefixed 20-byte EVM address`, 2);
  return raw;
}

async function create(a: ParsedArgs): Promise<CommandResult> {
  positionals(a, 0, USAGE.create);
  const out = str(a, 'out');
  const dir = path.join(walletsDir(), 'usdc');
  if (!out) await mkdir(dir, { recursive: true });
  const { account, file } = await createEvmKeyFile((addr) => path.resolve(out ?? path.join(dir, `${addr}.json`)));
  return { data: { address: account.address, key_file: file }, text: `address  ${account.address}\nkey file ${file}`, quiet: account.address };
}

async function fund(a: ParsedArgs): Promise<CommandResult> {
  const [addrRaw, amountRaw] = positionals(a, 2, USAGE.fund);
  const addr = address(addrRaw!);
  const atomic = parseAtomicDecimal('USDC', amountRaw!);
  if (atomic === null) throw new CliError('usage', `amount must be a positive USDC amount with at most 6 decimal places, got ${JSON.stringify(amountRaw)}`, 2);
  const doc = expectShape(balanceDoc, await serviceJson('POST', `${marketUrl()}/api/v1/usdc/faucet`, {}, { address: addr, amount: atomic.toString() }), 'usdc fund');
  return {
    data: { address: doc.address, funded_atomic: atomic.toString(), balance_atomic: doc.balance_atomic, balance: doc.balance },
    text: `funded ${doc.address} with ${amountRaw} USDC (simulated ledger); balance ${doc.balance} USDC`,
    quiet: doc.balance_atomic,
  };
}

async function balance(a: ParsedArgs): Promise<CommandResult> {
  const [addrRaw] = positionals(a, 1, USAGE.balance);
  const addr = address(addrRaw!);
  const doc = expectShape(balanceDoc, await serviceJson('GET', `${marketUrl()}/api/v1/usdc/balances/${addr}`, {}), 'usdc balance');
  return { data: { address: doc.address, balance_atomic: doc.balance_atomic, balance: doc.balance }, text: `${doc.address}: ${doc.balance} USDC (${doc.balance_atomic} atomic, simulated ledger)`, quiet: doc.balance_atomic };
}
