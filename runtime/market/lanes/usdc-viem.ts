/**
 * The USDC lane's ledger on a real EVM chain through viem (DESIGN §5 "Lanes", ADR 0025): any
 * JSON-RPC (`BASE_RPC_URL`), a relayer key that pays the gas and submits
 * `transferWithAuthorization`, and a token with USDC's EIP-3009 interface. A settlement is
 * simulated first, so a revert becomes the x402 SDK's reason code and nothing is sent; then it
 * is sent, its receipt awaited and checked for the Transfer it must carry, as @x402/evm's
 * facilitator does.
 */
import { createPublicClient, createWalletClient, defineChain, getAddress, http, isAddressEqual, parseEventLogs, parseSignature, type Hex, type Log } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, type Config } from '../../config.ts';
import type { Authorization } from './eip3009.ts';
import { EIP3009_ABI, settleFailure } from './usdc-viem-abi.ts';
import { configuredUsdcToken, type NonceUse, type SettleResult, type TransferTerms, type UsdcLedger, type UsdcToken } from './usdc-ledger.ts';

export interface UsdcViemOptions {
  rpcUrl: string;
  /** 0x + 64 hex: the relayer that submits settlements and pays their gas. */
  relayerKey: Hex;
  token: UsdcToken;
  /** First block searched for an authorization's earlier settlement (providers cap log ranges). */
  logsFromBlock?: bigint;
  /** How often receipts and blocks are polled. */
  pollingIntervalMs?: number;
  /** How long a sent settlement's receipt is awaited before it is reported pending. */
  receiptTimeoutMs?: number;
}

const fail = (reason: string, message?: string, transient = false): SettleResult => ({ ok: false, reason, ...(message ? { message } : {}), ...(transient ? { transient } : {}) });

export class UsdcViemLedger implements UsdcLedger {
  readonly signers: readonly string[];
  private readonly address: Hex;
  private readonly client;
  private readonly wallet;
  private readonly account;
  /** One settlement per authorization at a time in this process. */
  private readonly inflight = new Map<string, Promise<SettleResult>>();
  /** Sends go one at a time, so each takes the relayer's next nonce from the node. */
  private sending: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly token: UsdcToken,
    private readonly o: UsdcViemOptions,
  ) {
    const chain = defineChain({ id: token.chainId, name: `eip155:${token.chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [o.rpcUrl] } } });
    const pollingInterval = o.pollingIntervalMs ?? 1000;
    this.account = privateKeyToAccount(o.relayerKey);
    this.client = createPublicClient({ chain, transport: http(o.rpcUrl), pollingInterval });
    this.wallet = createWalletClient({ chain, transport: http(o.rpcUrl), account: this.account, pollingInterval });
    this.address = getAddress(token.address);
    this.signers = [this.account.address];
  }

  /** Connects and checks that the chain and the token are the ones configured (else quotes would name a wrong domain). */
  static async open(o: UsdcViemOptions): Promise<UsdcViemLedger> {
    const l = new UsdcViemLedger(o.token, o);
    const chainId = await l.client.getChainId();
    if (chainId !== o.token.chainId) throw new Error(`BASE_RPC_URL serves chain ${chainId}, but the USDC lane is on chain ${o.token.chainId} (USDC_NETWORK eip155:${o.token.chainId})`);
    const [name, version] = await Promise.all([
      l.client.readContract({ address: l.address, abi: EIP3009_ABI, functionName: 'name' }),
      l.client.readContract({ address: l.address, abi: EIP3009_ABI, functionName: 'version' }),
    ]).catch((e: unknown) => {
      throw new Error(`USDC_TOKEN_ADDRESS ${o.token.address} does not answer name()/version() on BASE_RPC_URL: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    });
    if (name !== o.token.name || version !== o.token.version) {
      throw new Error(`the token at ${o.token.address} is "${name}" version "${version}", not the configured "${o.token.name}" version "${o.token.version}"`);
    }
    return l;
  }

  balanceOf(address: string): Promise<bigint> {
    return this.client.readContract({ address: this.address, abi: EIP3009_ABI, functionName: 'balanceOf', args: [getAddress(address)] });
  }

  authorizationState(authorizer: string, nonce: string): Promise<boolean> {
    return this.client.readContract({ address: this.address, abi: EIP3009_ABI, functionName: 'authorizationState', args: [getAddress(authorizer), nonce as Hex] });
  }

  /** Asked one at a time, as a JSON-RPC node would want. */
  async nonceUses(transfers: readonly TransferTerms[]): Promise<NonceUse[]> {
    const out: NonceUse[] = [];
    for (const t of transfers) out.push((await this.authorizationState(t.from, t.nonce)) ? await this.useOf(t) : { state: 'unused' });
    return out;
  }

  transferWithAuthorization(a: Authorization, nowS: number, signature: string): Promise<SettleResult> {
    const key = `${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.settle(a, nowS, signature as Hex).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private async settle(a: Authorization, nowS: number, signature: Hex): Promise<SettleResult> {
    if (BigInt(a.validBefore) <= BigInt(nowS)) return fail('invalid_exact_evm_payload_authorization_valid_before', 'the authorization has expired');
    try {
      if (await this.authorizationState(a.from, a.nonce)) return await this.prior(a);
      const sig = parseSignature(signature);
      const args = [getAddress(a.from), getAddress(a.to), BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce as Hex, Number(sig.v ?? BigInt(sig.yParity + 27)), sig.r, sig.s] as const;
      const call = { address: this.address, abi: EIP3009_ABI, functionName: 'transferWithAuthorization', args, account: this.account } as const;
      const { request } = await this.client.simulateContract(call);
      const sent = this.sending.then(() => this.wallet.writeContract(request));
      this.sending = sent.catch(() => undefined);
      const hash = await sent;
      let receipt;
      try {
        receipt = await this.client.waitForTransactionReceipt({ hash, timeout: this.o.receiptTimeoutMs ?? 120_000 });
      } catch (e) {
        return fail('settlement_pending', `transaction ${hash} sent, no receipt yet: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, true);
      }
      // Reverted on chain after a clean simulation: someone else used the nonce first.
      if (receipt.status !== 'success') return (await this.authorizationState(a.from, a.nonce)) ? await this.prior(a) : fail('invalid_exact_evm_transaction_failed', `transaction ${hash} reverted`);
      if (!this.carries(receipt.logs, a)) return fail('invalid_exact_evm_transfer_event_mismatch', `transaction ${hash} has no Transfer of this authorization`);
      return { ok: true, tx: hash, replay: false };
    } catch (e) {
      const f = settleFailure(e);
      return fail(f.reason, f.message, f.transient);
    }
  }

  /** A used nonce: the same authorization answers with its transaction; any other use is a replay. */
  private async prior(a: Authorization): Promise<SettleResult> {
    const use = await this.useOf(a);
    return use.state === 'settled' ? { ok: true, tx: use.tx, replay: true } : fail('invalid_exact_evm_nonce_already_used', 'this authorization nonce was already used');
  }

  /**
   * What used a nonce the token says is used: the transaction whose AuthorizationUsed names it,
   * and whether that authorization's own Transfer there is this transfer; else a cancellation.
   */
  private async useOf(t: TransferTerms): Promise<NonceUse> {
    const query = { address: this.address, abi: EIP3009_ABI, args: { authorizer: getAddress(t.from), nonce: t.nonce as Hex }, fromBlock: this.o.logsFromBlock ?? 0n, toBlock: 'latest' } as const;
    const tx = (await this.client.getContractEvents({ ...query, eventName: 'AuthorizationUsed' }))[0]?.transactionHash;
    if (tx) {
      const receipt = await this.client.getTransactionReceipt({ hash: tx });
      return this.carries(receipt.logs, t) ? { state: 'settled', tx } : { state: 'spent', reason: `nonce used by another transfer (${tx})` };
    }
    const cancel = (await this.client.getContractEvents({ ...query, eventName: 'AuthorizationCanceled' }))[0]?.transactionHash;
    return cancel ? { state: 'spent', reason: `authorization cancelled (${cancel})` } : { state: 'unknown' };
  }

  /**
   * The transaction used this transfer's authorization: its AuthorizationUsed log is followed by
   * the Transfer it authorized (USDC's `_transferWithAuthorization` emits the two together). A
   * Transfer elsewhere in the transaction, even of the same amount to the same payee, may be
   * another authorization's and does not count.
   */
  private carries(logs: Log[], t: TransferTerms): boolean {
    const events = parseEventLogs({ abi: EIP3009_ABI, logs: logs.filter((l) => isAddressEqual(l.address, this.address)) });
    const from = getAddress(t.from);
    const i = events.findIndex((e) => e.eventName === 'AuthorizationUsed' && isAddressEqual(e.args.authorizer, from) && e.args.nonce.toLowerCase() === t.nonce.toLowerCase());
    const next = i < 0 ? undefined : events[i + 1];
    return next?.eventName === 'Transfer' && next.logIndex === events[i]!.logIndex + 1 && isAddressEqual(next.args.from, from) && isAddressEqual(next.args.to, getAddress(t.to)) && next.args.value === BigInt(t.value);
  }
}

/** The lane's ledger as configured (runtime/config.ts): undefined for the embedded simulation. */
export async function openConfiguredUsdcLedger(c: Pick<Config, 'USDC_LANE' | 'BASE_RPC_URL' | 'USDC_RELAYER_KEY' | 'USDC_TOKEN_ADDRESS' | 'USDC_TOKEN_NAME' | 'USDC_TOKEN_VERSION' | 'USDC_NETWORK' | 'USDC_LOGS_FROM_BLOCK'>): Promise<UsdcLedger | undefined> {
  if (c.USDC_LANE === 'sim') return undefined;
  const missing = (['BASE_RPC_URL', 'USDC_RELAYER_KEY'] as const).filter((k) => !c[k]);
  if (missing.length) throw new ConfigError(missing.map((k) => `${k}: required when USDC_LANE=rpc`));
  return UsdcViemLedger.open({
    rpcUrl: c.BASE_RPC_URL!,
    relayerKey: c.USDC_RELAYER_KEY as Hex,
    token: configuredUsdcToken(c),
    ...(c.USDC_LOGS_FROM_BLOCK !== undefined ? { logsFromBlock: c.USDC_LOGS_FROM_BLOCK } : {}),
  });
}
