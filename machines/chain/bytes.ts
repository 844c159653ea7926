/**
 * Minimal fixed-width big-endian writer/reader for the canonical transaction encoding.
 * Every read is bounds-checked and throws TxError('malformed'); nothing is ever guessed.
 */
import { TxError } from './errors.ts';

export const U16_MAX = 0xffff;
export const U32_MAX = 0xffff_ffff;
export const U64_MAX = 0xffff_ffff_ffff_ffffn;

export class ByteWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  bytes(b: Uint8Array): this {
    this.parts.push(b);
    this.size += b.length;
    return this;
  }
  u8(n: number): this {
    return this.bytes(Uint8Array.of(n));
  }
  u16(n: number): this {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, n, false);
    return this.bytes(b);
  }
  u32(n: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n, false);
    return this.bytes(b);
  }
  u64(n: bigint): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, n, false);
    return this.bytes(b);
  }
  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let off = 0;
    for (const p of this.parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
}

export class ByteReader {
  private off = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  get offset(): number {
    return this.off;
  }
  get remaining(): number {
    return this.buf.length - this.off;
  }
  private need(n: number, what: string): void {
    if (this.remaining < n) {
      throw new TxError('malformed', `truncated at byte ${this.off}: ${what} needs ${n} bytes, ${this.remaining} left`);
    }
  }
  bytes(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.buf.slice(this.off, this.off + n);
    this.off += n;
    return out;
  }
  u8(what: string): number {
    this.need(1, what);
    return this.view.getUint8(this.off++);
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.view.getUint16(this.off, false);
    this.off += 2;
    return v;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.off, false);
    this.off += 4;
    return v;
  }
  u64(what: string): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.off, false);
    this.off += 8;
    return v;
  }
}

/** Printable ASCII without space (0x21..0x7e): the only bytes allowed in string fields. */
export function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

export function asciiToBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function bytesToAscii(b: Uint8Array): string | undefined {
  let s = '';
  for (const c of b) {
    if (c < 0x21 || c > 0x7e) return undefined;
    s += String.fromCharCode(c);
  }
  return s;
}
