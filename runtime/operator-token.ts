import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The operator token guards `/ops` and the operator API the CLI uses. Taken from
 * ANMPAY_OPERATOR_TOKEN, else read from (or created once in) `<data dir>/operator-token`.
 */
export async function loadOperatorToken(dataDir: string, fromEnv?: string): Promise<string> {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, 'operator-token');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    const token = `opt_${randomBytes(24).toString('hex')}`;
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await readFile(file, 'utf8')).trim();
  }
}
