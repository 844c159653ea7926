/**
 * `anmpay wallet create|balance|fund|pay`. Chain commands take `--network test|live`
 * (default: the network of the address, intent or wallet involved, else test).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { formatAnm } from '../../machines/money/money.ts';
import { NETWORKS, decodeAddress, encodeSignedTx, networkByHrp, type NetworkName } from '../../machines/chain/index.ts';
import { generateWallet, readWalletFile, sign, writeWalletFile, type Wallet } from '../chain/codec/keys.ts';
import { buildPaymentTx, paymentDocSchema } from '../chain/payment-tx.ts';
import { nanm, networkOpt, parse, positionals, str, usageError, type ParsedArgs } from './args.ts';
import { expectShape, getServiceJson, rpcFor, serviceUrl, walletsDir } from './env.ts';
import { groupUsage, usageOf } from './help.ts';
import { CliError, runCommand, type CommandResult } from './output.ts';

const USAGE = {
  create: usageOf('wallet', 'create'),
  balance: usageOf('wallet', 'balance'),
  fund: usageOf('wallet', 'fund'),
  pay: usageOf('wallet', 'pay'),
};
const NET = { network: { type: 'string' } } as const;

/** Entry from the dispatcher in main.ts. */
export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create':
      return create(parse(rest, { ...NET, out: { type: 'string' } }, USAGE.create));
    case 'balance':
      return balance(parse(rest, NET, USAGE.balance));
    case 'fund':
      return fund(parse(rest, NET, USAGE.fund));
    case 'pay':
      return pay(parse(rest, { ...NET, wallet: { type: 'string' }, 'amount-nanm': { type: 'string' }, 'fee-nanm': { type: 'string' }, force: { type: 'boolean' } }, USAGE.pay));
    default:
      throw usageError(`unknown wallet command ${JSON.stringify(sub ?? '')}`, groupUsage('wallet'));
  }
}

/** The flag if given; else the network the address's hrp names; a conflict is an error. */
function networkFor(a: ParsedArgs, address: string): { network: NetworkName; address: string } {
  const flag = networkOpt(a);
  const decoded = decodeAddress(address);
  const fromHrp = networkByHrp(decoded.hrp);
  if (!fromHrp) throw new CliError('bad_address', `address hrp "${decoded.hrp}" is neither ${NETWORKS.live.hrp} (live) nor ${NETWORKS.test.hrp} (test)`);
  if (flag && flag !== fromHrp) throw new CliError('wrong_hrp', `address ${address} is a ${fromHrp} address, --network is ${flag}`);
  return { network: fromHrp, address: decoded.address };
}

async function create(a: ParsedArgs): Promise<CommandResult> {
  positionals(a, 0, USAGE.create);
  const network = networkOpt(a) ?? 'test';
  const w = generateWallet(network);
  const file = path.resolve(str(a, 'out') ?? path.join(walletsDir(), `${w.address}.json`));
  await mkdir(path.dirname(file), { recursive: true });
  await writeWalletFile(file, w);
  return { data: { address: w.address, wallet: file, network }, text: `address ${w.address}\nwallet  ${file}`, quiet: w.address };
}

async function balance(a: ParsedArgs): Promise<CommandResult> {
  const [raw] = positionals(a, 1, USAGE.balance);
  const { network, address } = networkFor(a, raw!);
  const rpc = rpcFor(network);
  const [bal, nonce] = await Promise.all([rpc.getBalance(address), rpc.getNonce(address, 'latest')]);
  return { data: { address, network, balance: bal, nonce }, text: `${address}: ${bal} nANM (nonce ${nonce}, ${network})`, quiet: bal.toString() };
}

async function fund(a: ParsedArgs): Promise<CommandResult> {
  const [raw, amountRaw] = positionals(a, 2, USAGE.fund);
  const { network, address } = networkFor(a, raw!);
  const amount = nanm(amountRaw!, 'amount');
  const r = await rpcFor(network).faucet(address, amount);
  return { data: { address, network, amount: r.amount, balance: r.balance }, text: `funded ${address} with ${r.amount} nANM; balance ${r.balance} nANM (${network})`, quiet: r.balance.toString() };
}

async function loadWallet(a: ParsedArgs, usage: string): Promise<Wallet> {
  const file = str(a, 'wallet');
  if (!file) throw usageError('--wallet <file> is required', usage);
  return readWalletFile(file);
}

async function pay(a: ParsedArgs): Promise<CommandResult> {
  const [intentId] = positionals(a, 1, USAGE.pay);
  const wallet = await loadWallet(a, USAGE.pay);
  const total = str(a, 'amount-nanm') === undefined ? undefined : nanm(str(a, 'amount-nanm')!, '--amount-nanm');
  const fee = str(a, 'fee-nanm') === undefined ? 0n : nanm(str(a, 'fee-nanm')!, '--fee-nanm', { allowZero: true });
  const url = `${serviceUrl()}/c/${encodeURIComponent(intentId!)}/payment.json`;
  const doc = expectShape(paymentDocSchema, await getServiceJson(url), `GET ${url}`);
  const flag = networkOpt(a);
  if (flag && flag !== doc.network) throw new CliError('wrong_network', `intent ${doc.id} is on the ${doc.network} network, --network is ${flag}`);
  if (wallet.network !== doc.network) throw new CliError('wrong_network', `wallet ${wallet.address} is a ${wallet.network} wallet, intent ${doc.id} is on the ${doc.network} network`);
  const rpc = rpcFor(doc.network);
  const [nonce, held] = await Promise.all([rpc.getNonce(wallet.address, 'pending'), rpc.getBalance(wallet.address)]);
  const tx = buildPaymentTx(doc, { chainId: NETWORKS[doc.network].chainId, publicKey: wallet.publicKey, nonce, fee }, total);
  const needed = tx.outputs.reduce((s, o) => s + o.amount, tx.fee);
  if (held < needed && a.values.force !== true) {
    throw new CliError(
      'insufficient_balance',
      `wallet ${wallet.address} holds ${formatAnm(held)} (${held} nANM) but this payment needs ${formatAnm(needed)} (${needed} nANM); nothing was sent. ` +
        `Fund it with: anmpay wallet fund ${wallet.address} ${needed - held}${doc.network === 'live' ? ' --network live' : ''} (or pass --force to send anyway and get a failed receipt)`,
    );
  }
  const txHash = await rpc.sendRawTransaction(encodeSignedTx(sign(tx, wallet.secretKey)));
  const sent = tx.outputs.reduce((s, o) => s + o.amount, 0n);
  return { data: { tx_hash: txHash }, text: `paid ${sent} nANM to intent ${doc.id} (${doc.network}, nonce ${nonce})\ntx_hash ${txHash}`, quiet: txHash };
}
