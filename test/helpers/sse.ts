/**
 * A dashboard SSE stream read by a test over plain HTTP: each complete block's event name, data
 * and id handed to `onEvent`, in order. `open` resolves once the response headers arrive.
 */
import http from 'node:http';

export interface SseBlock {
  event: string | undefined;
  data: string;
  id: string | undefined;
  headers: http.IncomingHttpHeaders;
}

export function readSse(url: string, cookie: string, onEvent: (b: SseBlock) => void): { open: Promise<http.IncomingHttpHeaders>; close: () => void } {
  let buf = '';
  let opened!: (h: http.IncomingHttpHeaders) => void;
  const open = new Promise<http.IncomingHttpHeaders>((resolve) => (opened = resolve));
  const req = http.get(url, { headers: { cookie: `anm_session=${cookie}` } }, (res) => {
    opened(res.headers);
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        onEvent({ event: /^event: (.*)$/m.exec(block)?.[1], data, id: /^id: (.*)$/m.exec(block)?.[1], headers: res.headers });
      }
    });
  });
  req.on('error', () => undefined);
  return { open, close: () => req.destroy() };
}
