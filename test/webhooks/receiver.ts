import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP webhook receiver on a local port for tests; it records every request byte for byte. */
export interface Received {
  eventId: string;
  timestamp: string;
  signature: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  body: { id: string; type: string; created: number; data: Record<string, unknown> };
  at: number;
}

/** What to answer: a status, a status with a body, or 'hang' (never answer). */
export type Reply = number | { status: number; body: string } | 'hang';

export class Receiver {
  readonly received: Received[] = [];
  reply: (r: Received, nth: number) => Reply | Promise<Reply> = () => 200;
  private server: http.Server;
  private hanging = new Set<http.ServerResponse>();
  port = 0;

  private constructor() {
    this.server = this.make();
  }

  static async start(port = 0): Promise<Receiver> {
    const r = new Receiver();
    await r.listen(port);
    return r;
  }

  private make(): http.Server {
    return http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks);
        const rec: Received = {
          eventId: String(req.headers['service-event-id']),
          timestamp: String(req.headers['service-timestamp']),
          signature: String(req.headers['service-signature']),
          headers: req.headers,
          rawBody,
          body: JSON.parse(rawBody.toString('utf8')) as Received['body'],
          at: Date.now(),
        };
        this.received.push(rec);
        void Promise.resolve(this.reply(rec, this.received.length)).then((r) => {
          if (r === 'hang') {
            this.hanging.add(res);
            return;
          }
          const { status, body } = typeof r === 'number' ? { status: r, body: 'ok' } : r;
          res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
        });
      });
    });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Answers every hanging request with `status`. */
  release(status = 200): void {
    for (const res of this.hanging) if (!res.writableEnded) res.writeHead(status).end('late');
    this.hanging.clear();
  }

  /** Goes down: refuses connections until `up()`. */
  async down(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  async up(): Promise<void> {
    this.server = this.make();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.down();
  }

  ids(): string[] {
    return this.received.map((r) => r.eventId);
  }
}
