/** `anmpay refund sign <refund_id> --wallet <file>`: signs a refund's unsigned transfer with the payout wallet and submits it. */
import { z } from 'zod';
import { encodeSignedTx, networkByChainId } from '../../machines/chain/index.ts';
import { readWalletFile, sign } from '../chain/codec/keys.ts';
import { buildRefundTx, unsignedTransferSchema } from '../chain/payment-tx.ts';
import { nanm, networkOpt, parse, positionals, str, usageError } from './args.ts';
import { usageOf } from './help.ts';
import { expectShape, getServiceJson, rpcFor, serviceUrl } from './env.ts';
import { CliError, runCommand, type CommandResult } from './output.ts';

const USAGE = usageOf('refund', 'sign');

const refundDoc = z.object({ id: z.string(), status: z.string().optional(), unsigned_transfer: unsignedTransferSchema.nullable() });

/** Entry from the dispatcher in main.ts. */
export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult> {
  const [sub, ...rest] = argv;
  if (sub !== 'sign') throw usageError(`unknown refund command ${JSON.stringify(sub ?? '')}`, USAGE);
  const a = parse(rest, { network: { type: 'string' }, wallet: { type: 'string' }, 'fee-nanm': { type: 'string' } }, USAGE);
  const [refundId] = positionals(a, 1, USAGE);
  const walletFile = str(a, 'wallet');
  if (!walletFile) throw usageError('--wallet <file> is required', USAGE);
  const apiKey = process.env.ANMPAY_API_KEY;
  if (!apiKey) throw new CliError('api_key_required', 'set ANMPAY_API_KEY to the merchant secret key of the refund\'s mode');
  const wallet = await readWalletFile(walletFile);
  const url = `${serviceUrl()}/api/v1/refunds/${encodeURIComponent(refundId!)}`;
  const doc = expectShape(refundDoc, await getServiceJson(url, { authorization: `Bearer ${apiKey}` }), `GET ${url}`);
  const u = doc.unsigned_transfer;
  if (!u) throw new CliError('nothing_to_sign', `refund ${doc.id} has no unsigned transfer (status ${doc.status ?? 'unknown'})`);
  const network = networkByChainId(u.chain_id);
  if (!network) throw new CliError('wrong_chain_id', `refund ${doc.id} is for unknown chain id ${u.chain_id}`);
  const flag = networkOpt(a);
  if (flag && flag !== network) throw new CliError('wrong_network', `refund ${doc.id} is on the ${network} network, --network is ${flag}`);
  if (wallet.network !== network || wallet.address !== u.from) {
    throw new CliError('wrong_wallet', `refund ${doc.id} must be signed by ${u.from} (${network}); the wallet is ${wallet.address} (${wallet.network})`);
  }
  const rpc = rpcFor(network);
  const nonce = await rpc.getNonce(wallet.address, 'pending');
  const feeRaw = str(a, 'fee-nanm');
  const tx = buildRefundTx(u, { chainId: u.chain_id, publicKey: wallet.publicKey, nonce, ...(feeRaw !== undefined && { fee: nanm(feeRaw, '--fee-nanm', { allowZero: true }) }) });
  const txHash = await rpc.sendRawTransaction(encodeSignedTx(sign(tx, wallet.secretKey)));
  return { data: { tx_hash: txHash }, text: `refund ${doc.id}: sent ${u.amount} nANM to ${u.to} (${network}, nonce ${nonce})\ntx_hash ${txHash}`, quiet: txHash };
}
