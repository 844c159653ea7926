/**
 * The simulated USDC ledger's faucet and balances (DESIGN §5 "Lanes": "a faucet for tests
 * and the CLI"), over HTTP so that `anmpay usdc fund|balance` works against a marketplace in
 * another process, as `anmpay wallet fund` does against the devnet. Registered only when the
 * USDC lane is the simulated ledger: its dollars are play money, never a real token's.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { formatAtomic } from '../../machines/money/market.ts';
import type { UsdcSimLedger } from '../../runtime/market/lanes/usdc-sim.ts';
import { AppError, issuesMessage } from '../errors.ts';
import { sendJson } from '../http/reply.ts';
import { parseQuery } from './query.ts';
import { ipRateLimit } from './rate-limit.ts';

/** At most 1,000,000 USDC per call: plenty for tests, and no number past what NUMERIC holds. */
const MAX_FUND = 10n ** 12n;
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address');
const fundBody = z.strictObject({ address, amount: z.string().regex(/^[1-9][0-9]{0,12}$/, 'a positive integer string of atomic units (6 decimals)') });

const view = (addr: string, balance: bigint) => ({ address: addr.toLowerCase(), asset: 'USDC', balance_atomic: balance.toString(), balance: formatAtomic('USDC', balance) });

const usdcFaucet: FastifyPluginAsync<{ ledger: UsdcSimLedger; perIpPerMinute: number }> = async (app, { ledger, perIpPerMinute }) => {
  app.post('/api/v1/usdc/faucet', { onRequest: ipRateLimit(perIpPerMinute) }, async (req, reply) => {
    const r = fundBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', issuesMessage(r.error.issues));
    const amount = BigInt(r.data.amount);
    if (amount > MAX_FUND) throw new AppError('invalid_body', `amount: at most ${MAX_FUND} atomic units per call`);
    const balance = await ledger.fund(r.data.address, amount);
    sendJson(reply, 200, { ...view(r.data.address, balance), funded_atomic: amount.toString() });
  });

  app.get('/api/v1/usdc/balances/:address', async (req, reply) => {
    const { address: addr } = parseQuery(z.object({ address }), req.params);
    sendJson(reply, 200, view(addr, await ledger.balanceOf(addr)));
  });
};

export default usdcFaucet;
