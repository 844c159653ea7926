/**
 * Purchase intent ids, `pi_` and 12 random bytes in hex. The bytes are drawn from the CSPRNG
 * a few hundred ids at a time: a draw per id cost a quote about as much CPU as its choice of
 * listing. Each byte is used once.
 */
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 12;
const pool = Buffer.allocUnsafe(ID_BYTES * 256);
let next = pool.length;

export function newIntentId(): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = `pi_${pool.toString('hex', next, next + ID_BYTES)}`;
  next += ID_BYTES;
  return id;
}
