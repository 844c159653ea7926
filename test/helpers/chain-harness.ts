import { machineRegistry } from '../../runtime/machines.ts';
import { randomBytes } from 'node:crypto';
import { paymentReference, refundReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import { NETWORKS } from '../../machines/chain/address.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { generateWallet, sign, type Wallet } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { ChainIndexer, type IndexerOptions } from '../../runtime/chain/indexer/indexer.ts';
import { startChainRouter } from '../../runtime/chain/indexer/router.ts';
import { buildPaymentTx, buildRefundTx } from '../../runtime/chain/payment-tx.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { Subscription } from '../../runtime/bus/types.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import type { Db } from '../../storage/db.ts';
import { waitFor, type Backend } from './backends.ts';
import { SignalsApplied } from './signals-applied.ts';

/** Engine + in-process devnet (mines on request) + indexer + chain router on one backend. */
export class ChainHarness {
  readonly merchant = generateWallet('test');
  readonly treasury = generateWallet('test');
  private n = 0;

  private constructor(
    readonly b: Backend,
    readonly devnet: DevnetServer,
    readonly rpc: AnmRpcClient,
    readonly engine: Engine,
    readonly indexer: ChainIndexer,
    private readonly router: Subscription,
    private readonly signals: SignalsApplied,
  ) {}

  static async start(
    b: Backend,
    registry = machineRegistry(),
    indexerOpts: Pick<IndexerOptions, 'blockSignalChunk'> = {},
  ): Promise<ChainHarness> {
    const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
    const rpc = new AnmRpcClient(`${devnet.url}/test`);
    const engine = new Engine({ db: b.db, bus: b.bus, registry, sweeper: { pollMs: 50 } });
    await engine.start();
    const signals = new SignalsApplied(b.bus);
    const router = await startChainRouter(signals.forRouter(), engine.host);
    const indexer = new ChainIndexer({ network: 'test', rpc, db: b.db, bus: signals.forIndexer(), holder: `test-${randomBytes(4).toString('hex')}`, pollMs: 30, startHeight: 0, ...indexerOpts });
    indexer.start();
    return new ChainHarness(b, devnet, rpc, engine, indexer, router, signals);
  }

  async createIntent(opts: { anm?: bigint; ttlMs?: number; required?: number } = {}): Promise<string> {
    const id = `pay_t${++this.n}_${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    await this.engine.host.apply(
      { kind: 'payment_intent', id, merchant: 'm_test', mode: 'test' },
      {
        type: 'intent.create',
        id: `create:${id}`,
        at: now,
        intent_id: id,
        merchant_id: 'm_test',
        mode: 'test',
        currency: 'ANM',
        requested_amount: null,
        anm_amount: String(opts.anm ?? 1_000_000_000n),
        payment_address: this.merchant.address,
        treasury_address: this.treasury.address,
        payment_reference: paymentReference(randomBytes(20)),
        expires_at: now + (opts.ttlMs ?? 30 * 60_000),
        required_confirmations: opts.required ?? 12,
        metadata: { order: id },
      },
    );
    return id;
  }

  context(id: string): Promise<{ state: string; ctx: PaymentIntentContext }> {
    return intentContext(this.b.db, id);
  }

  async customer(fund = 100_000_000_000n): Promise<Wallet> {
    const w = generateWallet('test');
    if (fund > 0n) await this.rpc.faucet(w.address, fund);
    return w;
  }

  /** Pays the intent from `payer`; `total` scales both legs (under/overpayment). */
  pay(id: string, payer: Wallet, total?: bigint): Promise<string> {
    return payIntent(this.b.db, this.rpc, id, payer, total);
  }

  /** Reserves a refund on the intent (the gateway's path); returns the refund id and the outcome. */
  async reserveRefund(id: string, amount: bigint): Promise<{ refundId: string; outcome: string }> {
    const { ctx } = await this.context(id);
    const refundId = `re_${randomBytes(6).toString('hex')}`;
    const at = Date.now();
    const r = await this.engine.host.apply(
      { kind: 'payment_intent', id },
      {
        type: 'refund.reserve',
        id: `reserve:${refundId}`,
        at,
        refund_id: refundId,
        amount: amount.toString(),
        refund_create: {
          type: 'refund.create',
          id: `create:${refundId}`,
          at,
          refund_id: refundId,
          payment_intent: id,
          merchant_id: 'm_test',
          mode: 'test',
          amount: amount.toString(),
          chain_id: NETWORKS.test.chainId,
          from: this.merchant.address,
          to: ctx.tx!.from,
          reference: refundReference(randomBytes(20)),
        },
      },
    );
    return { refundId, outcome: r.outcome };
  }

  /** The merchant signs the refund's unsigned transfer from the payout wallet and broadcasts it. */
  async signRefund(refundId: string): Promise<string> {
    const c = await waitFor(async () => {
      const { rows } = await this.b.db.query<{ snapshot: { context: { to: string; amount: string; reference: string } } }>(`SELECT snapshot FROM actors WHERE id = $1`, [refundId]);
      return rows[0]?.snapshot.context;
    }, 10_000, `refund ${refundId}`);
    const nonce = await this.rpc.getNonce(this.merchant.address, 'pending');
    const tx = buildRefundTx(
      { chain_id: NETWORKS.test.chainId, from: this.merchant.address, to: c.to, amount: BigInt(c.amount), reference: c.reference },
      { chainId: NETWORKS.test.chainId, publicKey: this.merchant.publicKey, nonce },
    );
    return this.rpc.sendRawTransaction(encodeSignedTx(sign(tx, this.merchant.secretKey)));
  }

  async state(id: string): Promise<string | undefined> {
    const { rows } = await this.b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id]);
    return rows[0]?.state;
  }

  async mine(n: number): Promise<void> {
    await this.rpc.mine(n);
  }

  /** Waits until the indexer has scanned the node's head and the actors have caught up. */
  async settle(): Promise<void> {
    const head = await this.rpc.blockNumber();
    // Scanned to the head and depth signals published for it.
    await waitFor(async () => {
      const { rows } = await this.b.db.query<{ height: number; d: number | null }>(`SELECT height, depth_head AS d FROM chain_cursor WHERE network = 'test'`);
      const c = rows[0];
      return c !== undefined && c.height >= head && (c.d ?? -1) >= head;
    }, 15_000, `indexer at head ${head} with depth signals`);
    await waitFor(async () => this.signals.caughtUp(), 15_000, 'the chain router to apply every signal published');
  }

  async waitState(id: string, state: string, timeoutMs = 15_000): Promise<PaymentIntentContext> {
    return waitFor(async () => {
      const { rows } = await this.b.db.query<{ state: string; snapshot: { context: PaymentIntentContext } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id]);
      return rows[0]?.state === state ? rows[0].snapshot.context : undefined;
    }, timeoutMs, `${id} to reach ${state}`);
  }

  async webhookTypes(id: string): Promise<string[]> {
    const { rows } = await this.b.db.query<{ t: string }>(`SELECT payload->'event'->>'type' AS t FROM outbox WHERE actor_id = $1 AND subject LIKE 'fx.webhook.%' ORDER BY id`, [id]);
    return rows.map((r) => r.t);
  }

  async stop(): Promise<void> {
    await this.indexer.stop();
    await this.router.stop();
    await this.engine.stop();
    await this.devnet.close();
  }
}

/** An intent's state and context, read from its actor row. */
export async function intentContext(db: Pick<Db, 'query'>, id: string): Promise<{ state: string; ctx: PaymentIntentContext }> {
  const { rows } = await db.query<{ state: string; snapshot: { context: PaymentIntentContext } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id]);
  return { state: rows[0]!.state, ctx: rows[0]!.snapshot.context };
}

/** Pays the intent from `payer` over `rpc`, as a customer's wallet does; `total` scales both legs (under/overpayment). */
export async function payIntent(db: Pick<Db, 'query'>, rpc: AnmRpcClient, id: string, payer: Wallet, total?: bigint): Promise<string> {
  const { ctx } = await intentContext(db, id);
  const nonce = await rpc.getNonce(payer.address, 'pending');
  const tx = buildPaymentTx(
    {
      id,
      status: 'AWAITING_PAYMENT',
      network: 'test',
      payment_address: ctx.payment_address,
      treasury_address: ctx.treasury_address,
      merchant_amount: BigInt(ctx.merchant_amount),
      protocol_fee: BigInt(ctx.protocol_fee),
      anm_amount: BigInt(ctx.anm_amount),
      payment_reference: ctx.payment_reference,
      expires_at: null,
    },
    { chainId: NETWORKS.test.chainId, publicKey: payer.publicKey, nonce },
    total,
  );
  return rpc.sendRawTransaction(encodeSignedTx(sign(tx, payer.secretKey)));
}
