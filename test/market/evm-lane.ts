/**
 * The USDC lane on a real EVM node for tests: a local Hardhat node (chain id 8453), a freshly
 * deployed EIP-3009 token (test/fixtures/evm/Eip3009Token.sol) under its own name, and the
 * viem ledger on it with a relayer of its own. Register before `useMarket` so the market
 * opens on it.
 */
import { afterAll, beforeAll } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type PublicClient, type WalletClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Authorization } from '../../runtime/market/lanes/eip3009.ts';
import { UsdcViemLedger } from '../../runtime/market/lanes/usdc-viem.ts';
import type { UsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import { deployToken, type DeployedToken } from '../fixtures/evm/token.ts';
import { DEV_KEYS, startEvmNode, type EvmNode } from '../helpers/evm-node.ts';

export const TOKEN_META = { name: 'Local USD Coin', version: '2', symbol: 'USDC' } as const;

export interface EvmLane {
  node: EvmNode;
  client: PublicClient;
  /** The deployer, minter of the token. */
  wallet: WalletClient;
  deployed: DeployedToken;
  token: UsdcToken;
  ledger: UsdcViemLedger;
  /** The relayer's key (it submits settlements). */
  relayerKey: `0x${string}`;
  balance(address: string): Promise<bigint>;
  /** Submits a signed leg straight to the token from the deployer's account (as a seller settling it itself would); resolves on success. */
  submit(payload: { signature: string; authorization: Authorization }): Promise<void>;
}

/** `chainId`: the node's chain (8453 unless a test puts the lane on another network). */
export function useEvmLane(opts: { chainId?: number } = {}): EvmLane {
  const lane = { relayerKey: DEV_KEYS[1] } as EvmLane;
  beforeAll(async () => {
    lane.node = await startEvmNode(opts);
    const chain = defineChain({ id: lane.node.chainId, name: 'local', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [lane.node.url] } } });
    lane.client = createPublicClient({ chain, transport: http(lane.node.url), pollingInterval: 50 });
    lane.wallet = createWalletClient({ chain, transport: http(lane.node.url), account: privateKeyToAccount(DEV_KEYS[0]!), pollingInterval: 50 });
    lane.deployed = await deployToken(lane.wallet, lane.client, TOKEN_META);
    lane.token = { address: lane.deployed.address, name: TOKEN_META.name, version: TOKEN_META.version, chainId: lane.node.chainId };
    lane.ledger = await UsdcViemLedger.open({ rpcUrl: lane.node.url, relayerKey: lane.relayerKey, token: lane.token, pollingIntervalMs: 50 });
    lane.balance = (address) => lane.ledger.balanceOf(address);
    lane.submit = async ({ signature, authorization: a }) => {
      const tx = await lane.wallet.writeContract({
        address: lane.deployed.address,
        abi: lane.deployed.abi,
        functionName: 'transferWithAuthorization',
        args: [getAddress(a.from), getAddress(a.to), BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature],
        account: lane.wallet.account!,
        chain: lane.wallet.chain,
      });
      if ((await lane.client.waitForTransactionReceipt({ hash: tx })).status !== 'success') throw new Error('the direct settlement reverted');
    };
  }, 60_000);
  afterAll(async () => {
    await lane.node?.stop();
  });
  return lane;
}
