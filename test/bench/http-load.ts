/**
 * The exact load generator of test/bench/request-load.ts (raw-load.ts) in a process of its
 * own, for a count that must be exact or where wrk is not installed: LOAD_REQUESTS requests
 * from LOAD_FILE (its line format) in order, round robin past the end, over LOAD_CONNECTIONS
 * keep-alive connections to LOAD_URL; prints one line `LOAD_JSON {...}`, with `sendCpuS`, its
 * CPU seconds while sending (its start, loading tsx and encoding, is no request's cost).
 */
import { readRequests } from './request-load.ts';
import { encodeRequests, sendExact } from './raw-load.ts';

const url = new URL(process.env.LOAD_URL!);
const COUNT = Number(process.env.LOAD_REQUESTS);
if (!Number.isInteger(COUNT) || COUNT <= 0) throw new Error(`LOAD_REQUESTS: ${process.env.LOAD_REQUESTS} (a positive whole number)`);
const encoded = encodeRequests(url, readRequests(process.env.LOAD_FILE!));
const wire = Array.from({ length: COUNT }, (_, i) => encoded[i % encoded.length]!);
const figures = await sendExact(url, wire, Number(process.env.LOAD_CONNECTIONS ?? 32));
console.log(`LOAD_JSON ${JSON.stringify(figures)}`);
