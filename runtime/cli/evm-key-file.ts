/**
 * EVM key files for the USDC lane: `{"address": "0x…", "private_key": "0x…"}`, written
 * owner-only (0600) and never overwritten, like ANM wallet files. A file holding only the
 * 0x-prefixed private key (as `cast wallet new` users keep them) is read too.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { CliError } from './output.ts';

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;
const keyFile = z.strictObject({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/), private_key: z.string().regex(PRIVATE_KEY) });

/** A new key; `fileFor` names its file from the address. */
export async function createEvmKeyFile(fileFor: (address: string) => string): Promise<{ account: PrivateKeyAccount; file: string }> {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  const file = fileFor(account.address);
  await writeFile(file, `${JSON.stringify({ address: account.address, private_key: privateKey }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { account, file };
}

export async function readEvmKeyFile(file: string): Promise<PrivateKeyAccount> {
  const text = (await readFile(file, 'utf8')).trim();
  if (PRIVATE_KEY.test(text)) return privateKeyToAccount(text as `0x${string}`);
  let parsed: z.infer<typeof keyFile>;
  try {
    parsed = keyFile.parse(JSON.parse(text));
  } catch {
    throw new CliError('bad_key_file', `${file} is neither {"address","private_key"} JSON nor a 0x-prefixed 32-byte private key`);
  }
  const account = privateKeyToAccount(parsed.private_key as `0x${string}`);
  if (account.address.toLowerCase() !== parsed.address.toLowerCase()) throw new CliError('bad_key_file', `${file}: address does not belong to private_key`);
  return account;
}
