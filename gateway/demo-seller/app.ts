/**
 * The demo seller's HTTP app (DESIGN §6): an ordinary x402 seller built only from the stock
 * packages, as any seller would build one, settling through the marketplace's facilitator.
 *
 * - `POST /echo`: x402 v2 (`@x402/express` over `@x402/core`'s x402ResourceServer), priced on
 *   the USDC lane (`exact`, on the lane's chain: eip155:8453 unless USDC_NETWORK says otherwise)
 *   and, when the marketplace has an ANM node, on the ANM lane (`exact-anm`, native:1);
 * - `GET /v1/quote-of-the-day`: x402 v1 (`x402-express` 1.x), USDC on the chain's v1 name
 *   (`base`, `base-sepolia`); not served on a chain x402 v1 has no name for.
 *
 * The routes, prices and payees are the ones the demo listings state
 * (runtime/market/seller/demo-seller.ts), so a listing and its seller's 402 always agree.
 */
import express, { type Express } from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentOption } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { paymentMiddleware as paymentMiddlewareV1 } from 'x402-express';
import { MARKET_LANES } from '../../machines/money/market.ts';
import type { UsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import { laneNetwork, v1NetworkName } from '../../runtime/market/requirements.ts';
import { ExactAnmServerScheme } from '../../runtime/market/seller/exact-anm-server.ts';
import { DEMO_ECHO, DEMO_QUOTE } from '../../runtime/market/seller/demo-seller.ts';
import { quoteOfTheDay } from './quotes.ts';

export interface DemoSellerAppOptions {
  /** The marketplace's facilitator (`<marketplace>/facilitator`). */
  facilitatorUrl: string;
  /** Where the app is reached: the v1 requirements name `<baseUrl><path>` as their resource. */
  baseUrl: string;
  /** The seller's payees; `ANM` only when the marketplace's ANM lane is on. */
  payTo: { USDC: `0x${string}`; ANM?: string | undefined };
  /** The USDC lane's token: its address and EIP-712 domain go in the requirements. */
  token: UsdcToken;
}

const MAX_TIMEOUT_S = 300;

export function buildDemoSellerApp(o: DemoSellerAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '64kb' }));

  const facilitator = new HTTPFacilitatorClient({ url: o.facilitatorUrl });
  // The lane's chain, as the marketplace's facilitator supports it: a route on another one fails the middleware's start.
  const usdcNetwork = laneNetwork('USDC', o.token);
  const server = new x402ResourceServer(facilitator).register(usdcNetwork, new ExactEvmScheme());
  const accepts: PaymentOption[] = [
    {
      scheme: MARKET_LANES.USDC.legScheme,
      network: usdcNetwork,
      payTo: o.payTo.USDC,
      price: { amount: DEMO_ECHO.prices.USDC.toString(), asset: o.token.address, extra: { name: o.token.name, version: o.token.version } },
      maxTimeoutSeconds: MAX_TIMEOUT_S,
    },
  ];
  if (o.payTo.ANM && DEMO_ECHO.prices.ANM !== undefined) {
    server.register(MARKET_LANES.ANM.network, new ExactAnmServerScheme());
    accepts.push({ scheme: MARKET_LANES.ANM.legScheme, network: MARKET_LANES.ANM.network, payTo: o.payTo.ANM, price: { amount: DEMO_ECHO.prices.ANM.toString(), asset: 'ANM' }, maxTimeoutSeconds: MAX_TIMEOUT_S });
  }
  app.use(paymentMiddleware({ [`${DEMO_ECHO.method} ${DEMO_ECHO.path}`]: { accepts, description: DEMO_ECHO.description, mimeType: 'application/json' } }, server));

  const v1Network = v1NetworkName(o.token) as 'base' | 'base-sepolia' | undefined;
  if (v1Network) mountV1(app, o, v1Network);

  app.post(DEMO_ECHO.path, (req, res) => {
    res.json({ echo: (req.body as unknown) ?? null });
  });
  return app;
}

/** The v1 quote of the day, priced in USDC on the chain's x402 v1 name. */
function mountV1(app: Express, o: DemoSellerAppOptions, network: 'base' | 'base-sepolia'): void {
  app.use(
    paymentMiddlewareV1(
      o.payTo.USDC,
      {
        [`${DEMO_QUOTE.method} ${DEMO_QUOTE.path}`]: {
          price: { amount: DEMO_QUOTE.prices.USDC.toString(), asset: { address: o.token.address as `0x${string}`, decimals: 6, eip712: { name: o.token.name, version: o.token.version } } },
          network,
          config: { description: DEMO_QUOTE.description, mimeType: 'application/json', maxTimeoutSeconds: MAX_TIMEOUT_S, resource: `${o.baseUrl}${DEMO_QUOTE.path}` as `${string}://${string}` },
        },
      },
      { url: o.facilitatorUrl as `${string}://${string}` },
    ),
  );

  app.get(DEMO_QUOTE.path, (_req, res) => {
    res.json(quoteOfTheDay(new Date()));
  });
}
