/**
 * A Server-Sent Events response (checkout and operator console streams): takes the reply
 * over, writes named events, keeps proxies awake with `: hb` comments, and runs `onClose` once
 * whichever side ends it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseStream {
  send(event: string, data: unknown, id?: number): void;
  close(): void;
  readonly closed: boolean;
}

export const SSE_HEARTBEAT_MS = 15_000;

export function openSse(req: FastifyRequest, reply: FastifyReply, onClose: () => void, heartbeatMs = SSE_HEARTBEAT_MS): SseStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  res.socket?.setNoDelay(true);
  res.write('retry: 3000\n\n');
  const beat = setInterval(() => res.write(': hb\n\n'), heartbeatMs);
  beat.unref();
  let closed = false;
  const stream: SseStream = {
    get closed() {
      return closed;
    },
    send(event, data, id) {
      if (closed) return;
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      if (closed) return;
      closed = true;
      clearInterval(beat);
      onClose();
      if (!res.writableEnded) res.end();
    },
  };
  req.raw.on('close', () => stream.close());
  res.on('error', () => stream.close());
  return stream;
}
