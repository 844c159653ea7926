/**
 * How the JSON-RPC client moves bytes: node:http(s) with keep-alive by default. A full
 * 1,000-transaction block is ~0.5 MB; through global fetch (undici, web streams, a WASM HTTP
 * parser) reading it cost 3-4x the CPU of node:http here, and the indexer reads every block.
 */
import http from 'node:http';
import https from 'node:https';

export interface RpcTransport {
  /** POSTs a JSON body; resolves with the status and body text, rejects on a transport failure. */
  post(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }>;
}

export function fetchTransport(fetchImpl: typeof fetch): RpcTransport {
  return {
    async post(url, body, timeoutMs) {
      const res = await fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        ...(timeoutMs > 0 && { signal: AbortSignal.timeout(timeoutMs) }),
      });
      return { status: res.status, text: await res.text() };
    },
  };
}

// Idle sockets close before a node's own keep-alive timeout (the devnet's is 5 s) would.
const agents = { http: new http.Agent({ keepAlive: true, timeout: 4_000 }), https: new https.Agent({ keepAlive: true, timeout: 4_000 }) };

function postOnce(url: URL, body: string, timeoutMs: number): Promise<{ status: number; text: string; reused: boolean }> {
  const lib = url.protocol === 'https:' ? https : http;
  const agent = url.protocol === 'https:' ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), reused: req.reusedSocket });
      });
      res.on('error', fail);
    });
    const timer = timeoutMs > 0 ? setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs) : undefined;
    function fail(err: Error): void {
      clearTimeout(timer);
      reject(Object.assign(err, { reused: req.reusedSocket }));
    }
    req.on('error', fail);
    req.end(body);
  });
}

export const httpTransport: RpcTransport = {
  async post(url, body, timeoutMs) {
    const u = new URL(url);
    try {
      return await postOnce(u, body, timeoutMs);
    } catch (e) {
      // A kept-alive socket the server closed just as it was reused: the request never reached
      // the node, so it is sent once more on a fresh connection.
      const err = e as NodeJS.ErrnoException & { reused?: boolean };
      if (err.reused && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) return postOnce(u, body, timeoutMs);
      throw e;
    }
  },
};
