/**
 * `--quiet` / `-q`: the one value a shell script goes on with, alone on stdout, so README's
 * first payment runs as written (`ADDR=$(npx anmpay wallet create --out payer.json -q)`).
 * Against a devnet server started here and a stub of GET /c/{id}/payment.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/index.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { runCli } from '../helpers/cli.ts';

let devnet: DevnetServer;
let stub: Server;
let stubUrl: string;
let dataDir: string;
const INTENT = 'pay_abcdefghijklmnopqrstuvwx';
const payee = generateWallet('test').address;
const treasury = generateWallet('test').address;

beforeAll(async () => {
  devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  dataDir = await mkdtemp(path.join(tmpdir(), 'anm-cli-q-'));
  const doc = {
    id: INTENT,
    status: 'AWAITING_PAYMENT',
    network: 'test',
    payment_address: payee,
    treasury_address: treasury,
    merchant_amount: '980000000',
    protocol_fee: '20000000',
    anm_amount: '1000000000',
    payment_reference: 'pr1:abcdefghijklmnopqrstuvwxyz234567',
    expires_at: null,
  };
  stub = createServer((req, res) => {
    const found = req.url === `/c/${INTENT}/payment.json`;
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(found ? doc : { error: { code: 'resource_missing', message: 'no' } }));
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await devnet?.close();
  await new Promise<void>((r) => (stub ? stub.close(() => r()) : r()));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { ANMPAY_DEVNET_URL: devnet.url, ANMPAY_URL: stubUrl, ANMPAY_DATA_DIR: dataDir });

describe('anmpay -q / --quiet', () => {
  it('wallet create, fund and pay print only the address, the balance and the tx hash', { timeout: 60_000 }, async () => {
    const wallet = path.join(dataDir, 'payer.json');
    const created = await cli(['wallet', 'create', '--out', wallet, '-q']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^${NETWORKS.test.hrp}1[02-9ac-hj-np-z]+\\n$`));
    const address = created.stdout.trim();

    const funded = await cli(['wallet', 'fund', address, '10000000000', '--quiet']);
    expect([funded.code, funded.stdout]).toEqual([0, '10000000000\n']);

    const paid = await cli(['wallet', 'pay', INTENT, '--wallet', wallet, '-q']);
    expect(paid.code, paid.stderr).toBe(0);
    expect(paid.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    const pending = await new AnmRpcClient(`${devnet.url}/test`).pendingTransactions();
    expect(pending.map((t) => t.hash)).toContain(paid.stdout.trim());
  });

  it('--json wins over -q; without either the text is unchanged; an error still goes to stderr with a non-zero exit', { timeout: 60_000 }, async () => {
    const both = await cli(['wallet', 'create', '--out', path.join(dataDir, 'b.json'), '-q', '--json']);
    expect(Object.keys(JSON.parse(both.stdout) as object).sort()).toEqual(['address', 'network', 'wallet']);
    const text = await cli(['wallet', 'create', '--out', path.join(dataDir, 'c.json')]);
    expect(text.stdout).toMatch(/^address tanm1\w+\nwallet {2}\S+c\.json\n$/);
    const bad = await cli(['wallet', 'pay', 'pay_nope', '--wallet', path.join(dataDir, 'c.json'), '-q']);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^error \(/);
  });
});
