/**
 * Starts the demo seller's app on DEMO_SELLER_PORT. Its base URL is what the demo listings
 * name as their endpoints, and the one origin routed execution may reach on loopback without
 * the development switch (ADR 0037).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildDemoSellerApp, type DemoSellerAppOptions } from './app.ts';
import { demoSellerOrigin } from './origin.ts';

export interface DemoSellerEdge {
  /** `http://<host>:<port>`, no trailing slash. */
  url: string;
  close(): Promise<void>;
}

export async function startDemoSeller(o: Omit<DemoSellerAppOptions, 'baseUrl'> & { host: string; port: number }): Promise<DemoSellerEdge> {
  // The v1 requirements name the resource by URL, which needs the port: listen first, then mount
  // the app (nothing can have connected in between: the address is not known to anyone yet).
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = demoSellerOrigin(o.host, (server.address() as AddressInfo).port);
  server.on('request', buildDemoSellerApp({ ...o, baseUrl: url }));
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
