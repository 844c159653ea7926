/**
 * Splits the bytes of one keep-alive HTTP/1.1 connection into answers and gives each one's
 * status, for the raw-socket load generators (paced-load.ts, raw-load.ts): it reads no more of an
 * answer than where it ends (the head, then Content-Length bytes or the chunks up to the last),
 * and keeps no body.
 */
import { connect, type Socket } from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/** `n` connections to `url`'s host and port, Nagle off, once all are open (the load generators' raw sockets). */
export function connectAll(url: URL, n: number): Promise<Socket[]> {
  return Promise.all(
    Array.from({ length: n }, () => new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port || 80), noDelay: true });
      socket.once('error', reject);
      socket.once('connect', () => resolve(socket));
    })),
  );
}

export class HttpAnswers {
  private buf: Buffer = Buffer.alloc(0);
  /** Body bytes still to skip of the answer being read, or -1 while reading a head, -2 inside chunks. */
  private remaining = -1;
  private status = 0;

  /** Feeds bytes; returns the statuses of the answers they completed, in order. */
  push(chunk: Buffer): number[] {
    const done: number[] = [];
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.remaining >= 0) {
        if (this.buf.length < this.remaining) {
          this.remaining -= this.buf.length;
          this.buf = Buffer.alloc(0);
          return done;
        }
        this.buf = this.buf.subarray(this.remaining);
        this.remaining = -1;
        done.push(this.status);
        continue;
      }
      if (this.remaining === -2) {
        if (!this.skipChunks()) return done;
        done.push(this.status);
        continue;
      }
      const end = this.buf.indexOf(CRLF2);
      if (end < 0) return done;
      const head = this.buf.toString('latin1', 0, end);
      this.buf = this.buf.subarray(end + 4);
      this.status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (length) this.remaining = Number(length[1]);
      else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) this.remaining = -2;
      else this.remaining = 0;
    }
  }

  /** Consumes whole chunks; true once the last chunk and its trailer end are read. */
  private skipChunks(): boolean {
    for (;;) {
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) return false;
      const size = parseInt(this.buf.toString('latin1', 0, eol), 16);
      if (size === 0) {
        // The last chunk: optional trailers, then an empty line.
        const end = this.buf.indexOf(CRLF2, eol - 2 < 0 ? 0 : eol - 2);
        if (end < 0) return false;
        this.buf = this.buf.subarray(end + 4);
        this.remaining = -1;
        return true;
      }
      if (this.buf.length < eol + 2 + size + 2) return false;
      this.buf = this.buf.subarray(eol + 2 + size + 2);
    }
  }
}
