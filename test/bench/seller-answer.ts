import type http from 'node:http';

/** bench:execute's seller: answers every paid call 200 at once, without settling, as a seller behind a fast handler would. */
export function answerPaidCall(req: http.IncomingMessage, res: http.ServerResponse): void {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==' }).end('{"answer":42}'));
}
