import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPaced } from './paced-run.ts';

describe('paced load with idempotency keys (the paced purchase row)', () => {
  it("sends each body under a key of its own, named after the body's line", async () => {
    const seen: Array<{ key: string | undefined; body: string }> = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ key: req.headers['idempotency-key'] as string | undefined, body });
        res.writeHead(200, { 'content-length': '2' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(path.join(tmpdir(), 'paced-keys-'));
    writeFileSync(path.join(dir, 'cookies'), 'none\n');
    // 5 clients at 20/s for 1 s: 100 requests, one per body.
    const bodies = Array.from({ length: 100 }, (_, i) => JSON.stringify({ n: i }));
    writeFileSync(path.join(dir, 'bodies'), bodies.join('\n'));
    try {
      const { port } = server.address() as { port: number };
      const f = await runPaced(`http://127.0.0.1:${port}/buy`, path.join(dir, 'cookies'), { sessions: 5, pace: 20, seconds: 1, bodiesFile: path.join(dir, 'bodies'), idempotencyKeys: 'k' });
      expect(f.non2xx).toBe(0);
    } finally {
      server.close();
    }
    expect(seen).toHaveLength(100);
    for (const s of seen) expect(s.key).toBe(`k${(JSON.parse(s.body) as { n: number }).n}`);
    expect(new Set(seen.map((s) => s.key)).size).toBe(100);
  }, 30_000);
});
