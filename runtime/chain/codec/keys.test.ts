import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NETWORKS, decodeAddress, paymentReference } from '../../../machines/chain/index.ts';
import { WalletFileError, generateWallet, readWalletFile, sign, walletFromFile, walletFromSeed, walletToFile, writeWalletFile } from './keys.ts';
import { WASM_BACKEND_NAME } from './mldsa65-wasm/loader.ts';
import { verifyBackendName, verifySignature, verifyTransaction } from './verify.ts';

const dir = await mkdtemp(join(tmpdir(), 'anm-wallet-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('runtime chain keys', () => {
  it('generates fresh wallets with addresses on the right network', () => {
    const a = generateWallet('test');
    const b = generateWallet('test');
    expect(a.address).not.toBe(b.address);
    expect(decodeAddress(a.address, 'tanm').hrp).toBe('tanm');
  });

  it('signs hedged (fresh signature each time) and verifies through verifySignature', () => {
    const payer = walletFromSeed(new Uint8Array(32), 'live');
    const to = walletFromSeed(new Uint8Array(32).fill(1), 'live');
    const tx = { chain_id: 1, from_public_key: payer.publicKey, nonce: 0n, outputs: [{ to: to.address, amount: 5n }], reference: paymentReference(new Uint8Array(20)), fee: 1n };
    const s1 = sign(tx, payer.secretKey);
    const s2 = sign(tx, payer.secretKey);
    expect(s1.signature).not.toEqual(s2.signature);
    for (const s of [s1, s2]) {
      const r = verifyTransaction(s, NETWORKS.live);
      expect(r.ok && r.from).toBe(payer.address);
    }
    expect(verifyBackendName()).toBe(WASM_BACKEND_NAME); // docs/adr/0003-ml-dsa-backend.md
    expect(verifySignature(payer.publicKey, new Uint8Array(1), s1.signature)).toBe(false);
    expect(verifySignature(new Uint8Array(3), new Uint8Array(1), new Uint8Array(2))).toBe(false);
  });

  it('writes an owner-only wallet file, reads it back, and will not overwrite it', async () => {
    const w = generateWallet('live');
    const path = join(dir, 'live.json');
    await writeWalletFile(path, w);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const json = JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
    expect(Object.keys(json).sort()).toEqual(['address', 'network', 'public_key', 'secret_key']);
    expect(await readWalletFile(path)).toEqual(w);
    await expect(writeWalletFile(path, w)).rejects.toThrow();
    await writeWalletFile(path, generateWallet('test'), { overwrite: true });
    expect((await readWalletFile(path)).network).toBe('test');
  });

  it('refuses wallet files that do not hang together', async () => {
    const w = walletToFile(walletFromSeed(new Uint8Array(32).fill(2), 'live'));
    const otherKey = walletToFile(walletFromSeed(new Uint8Array(32).fill(3), 'live'));
    expect(() => walletFromFile({ ...w, network: 'test' })).toThrow(/address does not match/);
    expect(() => walletFromFile({ ...w, public_key: otherKey.public_key })).toThrow(/does not belong/);
    expect(() => walletFromFile({ ...w, secret_key: 'abcd' })).toThrow(WalletFileError);
    const path = join(dir, 'broken.json');
    await writeFile(path, '{not json');
    await expect(readWalletFile(path)).rejects.toThrow(/not JSON/);
  });
});
