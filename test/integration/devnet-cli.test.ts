/**
 * `anmpay` chain commands end to end as child processes (issue 4 item 7; DESIGN §6 CLI),
 * against a devnet server started here and a stub of the merchant service's two documents
 * the CLI reads: GET /c/{id}/payment.json and GET /api/v1/refunds/{id}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingBytes } from '../../machines/chain/index.ts';
import { readWalletFile } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { renderGroupHelp, renderHelp } from '../../runtime/cli/help.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const API_KEY = 'ask_test_stubstubstubstubstubstubstubstub';

let devnet: DevnetServer;
let stub: Server;
let stubUrl: string;
let dataDir: string;
let rpc: AnmRpcClient;
const intents = new Map<string, Record<string, unknown>>();
const refunds = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  rpc = new AnmRpcClient(`${devnet.url}/test`);
  dataDir = await mkdtemp(path.join(tmpdir(), 'anm-cli-'));
  stub = createServer((req, res) => {
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const missing = () => send(404, { error: { type: 'invalid_request', code: 'resource_missing', message: 'no such object', request_id: 'req_1' } });
    const url = req.url ?? '';
    const pay = /^\/c\/([^/]+)\/payment\.json$/.exec(url);
    if (pay) return intents.has(pay[1]!) ? send(200, intents.get(pay[1]!)) : missing();
    const refund = /^\/api\/v1\/refunds\/([^/]+)$/.exec(url);
    if (refund) {
      if (req.headers.authorization !== `Bearer ${API_KEY}`) return send(401, { error: { type: 'invalid_request', code: 'authentication_required', message: 'bad key', request_id: 'req_2' } });
      return refunds.has(refund[1]!) ? send(200, refunds.get(refund[1]!)) : missing();
    }
    missing();
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await devnet.close();
  await new Promise<void>((r) => stub.close(() => r()));
  await rm(dataDir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const r = await runCli(args, { ANMPAY_DEVNET_URL: devnet.url, ANMPAY_URL: stubUrl, ANMPAY_DATA_DIR: dataDir, ANMPAY_API_KEY: '', ...env });
  let json = {} as Run['json'];
  try {
    json = JSON.parse(r.stdout) as Run['json'];
  } catch {
    /* text output */
  }
  return { ...r, json };
}

async function ok(args: string[], env?: Record<string, string>): Promise<Run['json']> {
  const r = await cli([...args, '--json'], env);
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return r.json;
}

function intent(id: string, payTo: string, treasury: string, merchantAmount: bigint, fee: bigint, reference: string): void {
  intents.set(id, {
    id,
    status: 'AWAITING_PAYMENT',
    network: 'test',
    payment_address: payTo,
    treasury_address: treasury,
    merchant_amount: merchantAmount.toString(),
    protocol_fee: fee.toString(),
    anm_amount: (merchantAmount + fee).toString(),
    payment_reference: reference,
    expires_at: '2030-01-01T00:00:00.000Z',
  });
}

const REF = (c: string) => `pr1:${c.repeat(32)}`;

describe('anmpay chain CLI (child processes)', () => {
  let payer: { address: string; wallet: string };
  let merchant: { address: string; wallet: string };
  let treasury: { address: string; wallet: string };

  it('wallet create writes an owner-only key file under .data/wallets by default, or --out', async () => {
    [payer, merchant, treasury] = (await Promise.all([ok(['wallet', 'create']), ok(['wallet', 'create']), ok(['wallet', 'create', '--out', path.join(dataDir, 't.json')])])) as unknown as [
      typeof payer,
      typeof payer,
      typeof payer,
    ];
    expect(payer.address).toMatch(/^tanm1/);
    expect(payer.wallet).toBe(path.join(dataDir, 'wallets', `${payer.address}.json`));
    expect((await stat(payer.wallet)).mode & 0o777).toBe(0o600);
    expect((await readWalletFile(treasury.wallet)).address).toBe(treasury.address);
    const live = await ok(['wallet', 'create', '--network', 'live', '--out', path.join(dataDir, 'live.json')]);
    expect(live.address).toMatch(/^anm1/);
  });

  it('wallet fund and wallet balance talk to the faucet and the node', async () => {
    expect(await ok(['wallet', 'fund', payer.address, '5000000000'])).toEqual({ address: payer.address, network: 'test', amount: '5000000000', balance: '5000000000' });
    expect(await ok(['wallet', 'balance', payer.address, '--network', 'test'])).toEqual({ address: payer.address, network: 'test', balance: '5000000000', nonce: '0' });
    const text = await cli(['wallet', 'balance', payer.address]);
    expect(text.stdout).toContain('5000000000 nANM');
  });

  it('wallet pay builds the two-output payment with the reference; --amount-nanm scales both legs', async () => {
    intent('pi_exact', merchant.address, treasury.address, 980_000_000n, 20_000_000n, REF('a'));
    intent('pi_under', merchant.address, treasury.address, 980_000_000n, 20_000_000n, REF('b'));
    const exact = await ok(['wallet', 'pay', 'pi_exact', '--wallet', payer.wallet]);
    const under = await ok(['wallet', 'pay', 'pi_under', '--wallet', payer.wallet, '--amount-nanm', '500000000']);
    expect(Object.keys(exact)).toEqual(['tx_hash']);
    const mined = await ok(['devnet', 'mine', '1']);
    expect(mined).toMatchObject({ network: 'test', head: { height: 1 } });
    const block = await rpc.getBlockByNumber(1, true);
    const byHash = new Map(block!.transactions.map((t) => [t.hash, t]));
    expect(byHash.get(exact.tx_hash as string)).toMatchObject({
      status: 'success',
      from: payer.address,
      reference: REF('a'),
      outputs: [
        { to: merchant.address, amount: 980_000_000n },
        { to: treasury.address, amount: 20_000_000n },
      ],
    });
    expect(byHash.get(under.tx_hash as string)).toMatchObject({
      status: 'success',
      reference: REF('b'),
      outputs: [
        { to: merchant.address, amount: 490_000_000n },
        { to: treasury.address, amount: 10_000_000n },
      ],
    });
    expect(await rpc.getBalance(merchant.address)).toBe(1_470_000_000n);
  });

  it('wallet pay checks the balance first: short, it sends nothing and says how much is missing; --force sends and gets a failed receipt', async () => {
    const broke = await ok(['wallet', 'create']);
    await ok(['wallet', 'fund', broke.address as string, '1000']);
    const refused = await cli(['wallet', 'pay', 'pi_exact', '--wallet', broke.wallet as string]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error (insufficient_balance): wallet ${broke.address as string} holds 0.000001 ANM (1000 nANM) but this payment needs`);
    expect(refused.stderr).toContain(`anmpay wallet fund ${broke.address as string} `);
    expect(await rpc.getNonce(broke.address as string, 'pending')).toBe(0n);
    expect((await rpc.pendingTransactions()).filter((t) => t.from === broke.address)).toEqual([]);
    const paid = await ok(['wallet', 'pay', 'pi_exact', '--wallet', broke.wallet as string, '--force']);
    await ok(['devnet', 'mine', '1']);
    expect(await rpc.getTransactionReceipt(paid.tx_hash as string)).toMatchObject({ status: 'failed', error: 'insufficient_balance' });
  }, 180_000);

  it('--json and --help anywhere on the line; ANMPAY_DEVNET_URL ending in /test is not doubled', async () => {
    const head = (await rpc.blockNumber()).toString();
    for (const args of [['--json', 'devnet', 'status'], ['devnet', '--json', 'status']]) {
      const r = await cli(args, { ANMPAY_DEVNET_URL: `${devnet.url}/test` });
      expect([r.code, String((r.json.head as { height: number } | undefined)?.height)], args.join(' ')).toEqual([0, head]);
    }
    const helps: Array<[string[], string]> = [
      [['--help'], renderHelp()],
      [['wallet', 'pay', '--json', '--help'], renderGroupHelp('wallet')],
      [['help', 'devnet'], renderGroupHelp('devnet')],
    ];
    for (const [args, text] of helps) {
      const r = await cli(args);
      expect([r.code, r.stderr, r.stdout], args.join(' ')).toEqual([0, '', text]);
    }
    const unknown = await cli(['nosuch', '--json']);
    expect([unknown.code, unknown.json.error?.code]).toEqual([2, 'usage']);
  }, 180_000);

  it('refund sign signs the unsigned transfer with the payout wallet and submits it', async () => {
    const m = await readWalletFile(merchant.wallet);
    const reference = `rf1:${'c'.repeat(32)}`;
    const payload = bytesToHex(
      signingBytes({ chain_id: 1001, from_public_key: m.publicKey, nonce: 0n, outputs: [{ to: payer.address, amount: 300_000_000n }], reference, fee: 0n }),
    );
    refunds.set('re_1', {
      id: 're_1',
      object: 'refund',
      status: 'REQUIRES_SIGNATURE',
      unsigned_transfer: { chain_id: 1001, from: merchant.address, to: payer.address, amount: '300000000', reference, nonce_hint: 0, signing_payload: payload },
    });
    const noKey = await cli(['refund', 'sign', 're_1', '--wallet', merchant.wallet, '--json']);
    expect([noKey.code, noKey.json.error?.code]).toEqual([1, 'api_key_required']);
    const wrongWallet = await cli(['refund', 'sign', 're_1', '--wallet', payer.wallet, '--json'], { ANMPAY_API_KEY: API_KEY });
    expect(wrongWallet.json.error?.code).toBe('wrong_wallet');
    const before = await rpc.getBalance(payer.address);
    const signed = await ok(['refund', 'sign', 're_1', '--wallet', merchant.wallet], { ANMPAY_API_KEY: API_KEY });
    await ok(['devnet', 'mine', '1']);
    expect(await rpc.getTransactionReceipt(signed.tx_hash as string)).toMatchObject({ status: 'success', from: merchant.address });
    const tx = await rpc.getTransactionByHash(signed.tx_hash as string);
    expect(tx).toMatchObject({ reference, outputs: [{ to: payer.address, amount: 300_000_000n }] });
    expect(await rpc.getBalance(payer.address)).toBe(before + 300_000_000n);
  });

  it('devnet reorg --drop removes a payment for good; status shows the longer chain', async () => {
    intent('pi_reorg', merchant.address, treasury.address, 1_000n, 10n, REF('d'));
    const paid = await ok(['wallet', 'pay', 'pi_reorg', '--wallet', payer.wallet]);
    await ok(['devnet', 'mine', '2']);
    const included = await rpc.getTransactionReceipt(paid.tx_hash as string);
    const before = await ok(['devnet', 'status']);
    const r = await ok(['devnet', 'reorg', '2', '--drop', paid.tx_hash as string]);
    expect(r).toMatchObject({ network: 'test', dropped: [paid.tx_hash], returned: [], fork_height: included!.block_height - 1 });
    expect(await rpc.getTransactionReceipt(paid.tx_hash as string)).toBeNull();
    const after = await ok(['devnet', 'status']);
    expect((after.head as { height: number }).height).toBe((before.head as { height: number }).height + 1);
    // the payer's nonce is free again: paying anew re-includes a payment for the intent
    const again = await ok(['wallet', 'pay', 'pi_reorg', '--wallet', payer.wallet]);
    await ok(['devnet', 'mine', '1']);
    expect(await rpc.getTransactionReceipt(again.tx_hash as string)).toMatchObject({ status: 'success' });
  });

  it('prints {"error":{"code","message"}} with --json and exits non-zero', async () => {
    const missing = await cli(['wallet', 'pay', 'pi_nope', '--wallet', payer.wallet, '--json']);
    expect([missing.code, missing.json.error?.code]).toEqual([1, 'resource_missing']);
    const liveWallet = await cli(['wallet', 'pay', 'pi_exact', '--wallet', path.join(dataDir, 'live.json'), '--json']);
    expect(liveWallet.json.error?.code).toBe('wrong_network');
    const usage = await cli(['devnet', 'mine', '--json']);
    expect([usage.code, usage.json.error?.code]).toEqual([2, 'usage']);
    const badFlag = await cli(['wallet', 'balance', payer.address, '--bogus', '--json']);
    expect([badFlag.code, badFlag.json.error?.code]).toEqual([2, 'usage']);
    const wrongHrp = await cli(['wallet', 'balance', payer.address, '--network', 'live', '--json']);
    expect(wrongHrp.json.error?.code).toBe('wrong_hrp');
    const deep = await cli(['devnet', 'reorg', '100000', '--json']);
    expect(deep.json.error).toMatchObject({ code: 'reorg_too_deep' });
    const down = await cli(['devnet', 'status', '--json'], { ANMPAY_DEVNET_URL: 'http://127.0.0.1:9' });
    expect([down.code, down.json.error?.code]).toEqual([1, 'node_unreachable']);
    const text = await cli(['devnet', 'mine', 'x']);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^error \(usage\)/);
  });

  it('devnet serve runs both networks until SIGTERM', async () => {
    const { child, ready } = await serve([]);
    expect(ready.data).toBeNull();
    expect(await new AnmRpcClient(ready.test).chainId()).toBe(1001);
    expect(await new AnmRpcClient(ready.live).chainId()).toBe(1);
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('devnet serve --data keeps both chains across a SIGKILL and a restart, and refuses a second server on the same directory', async () => {
    const dir = path.join(dataDir, 'served-devnet');
    const first = await serve(['--data', dir]);
    expect(first.ready.data).toBe(dir);
    const test = new AnmRpcClient(first.ready.test);
    const payer = await ok(['wallet', 'create']);
    const env = { ANMPAY_DEVNET_URL: first.ready.url };
    await ok(['wallet', 'fund', payer.address as string, '5000'], env);
    await ok(['devnet', 'mine', '3'], env);
    await ok(['devnet', 'reorg', '1'], env);
    await ok(['devnet', 'mine', '2', '--network', 'live'], env);
    const before = { head: await test.blockNumber(), hash: (await test.getBlockByNumber('latest'))!.hash, balance: await test.getBalance(payer.address as string) };
    const second = await cli(['devnet', 'serve', '--port', '0', '--data', dir, '--json']);
    expect([second.code, second.json.error?.code]).toEqual([1, 'devnet_locked']);
    expect(second.json.error?.message).toContain(`process ${first.child.pid}`);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.on('exit', r));

    const again = await serve(['--data', dir]);
    expect(again.ready.heads).toEqual({ test: 4, live: 2 }); // 3 mined, reorg(1) makes 4
    const rpc2 = new AnmRpcClient(again.ready.test);
    expect({ head: await rpc2.blockNumber(), hash: (await rpc2.getBlockByNumber('latest'))!.hash, balance: await rpc2.getBalance(payer.address as string) }).toEqual(before);
    expect(before.balance).toBe(5000n);
    const exited = new Promise<number | null>((r) => again.child.on('exit', r));
    again.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 180_000);
});

/** Starts `anmpay devnet serve --port 0 --block-ms 0 --json <extra>` and waits for its ready line. */
async function serve(extra: string[]): Promise<{ child: ChildProcess; ready: { url: string; test: string; live: string; data: string | null; heads: Record<string, number> } }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/anmpay.js', 'devnet', 'serve', '--port', '0', '--block-ms', '0', '--json', ...extra], { cwd: ROOT });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`serve exited early with ${code}: ${out}`)));
  });
  return { child, ready: JSON.parse(line) as Awaited<ReturnType<typeof serve>>['ready'] };
}
