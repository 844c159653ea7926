import { describe, expect, it } from 'vitest';
import { HttpAnswers } from './http-answers.ts';

const sized = (status: number, body: string): string => `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const chunked = (status: number, chunks: string[], trailer = ''): string =>
  `HTTP/1.1 ${status} X\r\nTransfer-Encoding: chunked\r\n\r\n${chunks.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join('')}0\r\n${trailer}\r\n`;

/** Feeds `wire` cut into pieces of `size` bytes and collects the statuses. */
function feed(wire: string, size: number): number[] {
  const bytes = Buffer.from(wire);
  const a = new HttpAnswers();
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...a.push(bytes.subarray(i, i + size)));
  return out;
}

describe('HttpAnswers (the paced load generator reads answers by their length)', () => {
  const wire = sized(200, '{"a":"é\r\n\r\nb"}') + chunked(404, ['ab', 'c\r\n\r\nd'], 'x-t: 1\r\n') + sized(204, '') + chunked(201, []) + sized(500, 'e'.repeat(20_000));
  const statuses = [200, 404, 204, 201, 500];

  it('splits a connection into its answers however the bytes arrive', () => {
    for (const size of [1, 2, 3, 7, 64, 4096, 1e6]) expect(feed(wire, size)).toEqual(statuses);
  });

  it('does not count an answer before its last byte', () => {
    const bytes = Buffer.from(sized(200, 'xyz'));
    const a = new HttpAnswers();
    expect(a.push(bytes.subarray(0, bytes.length - 1))).toEqual([]);
    expect(a.push(bytes.subarray(bytes.length - 1))).toEqual([200]);
  });
});
