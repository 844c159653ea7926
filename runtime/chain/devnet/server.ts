/**
 * One HTTP server for both devnets: JSON-RPC 2.0 by POST at `/test` (chain id 1001) and
 * `/live` (chain id 1). `npm start` runs it in-process (bin/services.ts), `anmpay
 * devnet serve` as its own process. Plain node:http: the node is a separate service from
 * the gateway and needs no plugins.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { NetworkName } from '../../../machines/chain/index.ts';
import { RpcError } from '../rpc-errors.ts';
import { DevnetNode, type DevnetOptions } from './node.ts';
import { devnetStatus, encodeRpcResponse, makeRpcHandler } from './rpc.ts';

export interface DevnetServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  host?: string;
  /** Automine interval for both networks; 0 = mine only on request. */
  blockMs: number;
  maxBlockTxs?: number;
  now?: DevnetOptions['now'];
  /** Largest request body accepted (bytes); a signed transaction is ~11 KB of hex. */
  maxBodyBytes?: number;
  /** Where the chains persist (`<dataDir>/test`, `<dataDir>/live`); without it they live in memory. */
  dataDir?: string;
}

export interface DevnetServer {
  /** Base URL without a path, e.g. http://127.0.0.1:3002; the RPC endpoints are url + '/test' and url + '/live'. */
  url: string;
  port: number;
  nodes: Record<NetworkName, DevnetNode>;
  close(): Promise<void>;
}

const NETWORK_PATHS: Record<string, NetworkName> = { '/test': 'test', '/live': 'live' };

export async function startDevnetServer(opts: DevnetServerOptions): Promise<DevnetServer> {
  const host = opts.host ?? '127.0.0.1';
  const maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
  const make = (network: NetworkName): DevnetNode =>
    new DevnetNode({
      network,
      blockMs: opts.blockMs,
      ...(opts.maxBlockTxs !== undefined && { maxBlockTxs: opts.maxBlockTxs }),
      ...(opts.now && { now: opts.now }),
      ...(opts.dataDir && { dataDir: path.join(opts.dataDir, network) }),
    });
  const test = make('test');
  let live: DevnetNode;
  try {
    live = make('live');
  } catch (e) {
    test.close();
    throw e;
  }
  const nodes: Record<NetworkName, DevnetNode> = { test, live };
  const handlers = { test: makeRpcHandler(nodes.test), live: makeRpcHandler(nodes.live) };

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true });
    const network = Object.hasOwn(NETWORK_PATHS, path) ? NETWORK_PATHS[path] : undefined;
    if (!network) return send(res, 404, { error: `no devnet at ${path}; use /test or /live` });
    if (req.method === 'GET') return send(res, 200, devnetStatus(nodes[network]));
    if (req.method !== 'POST') return send(res, 405, { error: 'JSON-RPC takes POST' });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBody) {
        send(res, 413, { jsonrpc: '2.0', id: null, error: RpcError.of('invalid_request', 'body_too_large', `request body over ${maxBody} bytes`).toJSON() });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 200, { jsonrpc: '2.0', id: null, error: RpcError.of('parse_error', 'parse_error', 'request body is not JSON').toJSON() });
    }
    const out = handlers[network](body);
    if (out === undefined) {
      res.writeHead(204).end();
      return;
    }
    const bytes = encodeRpcResponse(out);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { jsonrpc: '2.0', id: null, error: RpcError.of('internal_error', 'internal_error', String(err)).toJSON() });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    // A port in use must not leave the chain logs locked.
    const onError = (err: Error): void => {
      test.close();
      live.close();
      reject(err);
    };
    server.once('error', onError);
    server.listen(opts.port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    nodes,
    async close() {
      nodes.test.close();
      nodes.live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
