/** The x402 facilitator API (DESIGN §5 "Facilitator"): the SDK's HTTPFacilitatorClient talks to these. */
import type { FastifyPluginAsync } from 'fastify';
import { sendJson } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';

const facilitator: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.get('/facilitator/supported', async (_req, reply) => {
    sendJson(reply, 200, deps.facilitator.supported());
  });
  // A failed verification is an answer, not an HTTP error: the SDK reads `isValid`.
  app.post('/facilitator/verify', async (req, reply) => {
    sendJson(reply, 200, await deps.facilitator.verify(req.body));
  });
  app.post('/facilitator/settle', async (req, reply) => {
    sendJson(reply, 200, await deps.facilitator.settle(req.body));
  });
};

export default facilitator;
