/**
 * The ledger read a purchase's claim carries (ADR 0044): the authorizations the raw legs name,
 * as objects or as the base64 header values the SDK makes, before any check; nothing for legs
 * that are not EIP-3009 authorizations, nor for a ledger outside this database.
 */
import { describe, expect, it } from 'vitest';
import { UsdcLane } from './lanes/usdc-lane.ts';
import type { UsdcLedger } from './lanes/usdc-ledger.ts';
import { UsdcSimLedger } from './lanes/usdc-sim.ts';
import type { Db } from '../../storage/db.ts';
import { ledgerReadAhead } from './usdc-purchase.ts';
import { decodeLeg } from './leg-codec.ts';

const FROM = '0xAbCdEf0000000000000000000000000000000001';
const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0').toUpperCase()}`;
const leg = (n: number) => ({ x402Version: 2, accepted: { scheme: 'exact' }, payload: { signature: '0x00', authorization: { from: FROM, to: FROM, value: '1', validAfter: '0', validBefore: '1', nonce: nonce(n) } } });
const base64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
// The read is built, never run, here: no database is asked.
const sim = new UsdcLane(new UsdcSimLedger({} as Db));

describe('ledgerReadAhead', () => {
  it('reads the states of both legs, lower-cased, in leg order, whichever form the legs come in', () => {
    for (const legs of [{ seller: leg(1), fee: leg(2) }, { seller: base64(leg(1)), fee: base64(leg(2)) }]) {
      const ahead = ledgerReadAhead(sim, legs);
      expect(ahead?.read.params).toEqual([FROM.toLowerCase(), nonce(1).toLowerCase(), FROM.toLowerCase(), nonce(2).toLowerCase()]);
      expect(ahead?.read.sql(5)).toContain('$8::text');
      const known = ahead!.known([{ used: false, balance: 5n }, { used: true, balance: 5n }]);
      expect(known.get(`${FROM.toLowerCase()}:${nonce(2).toLowerCase()}`)).toEqual({ used: true, balance: 5n });
      expect(ahead!.read.parse([{ used: true, balance: '7' }, { used: false, balance: null }])).toEqual([{ used: true, balance: 7n }, { used: false, balance: 0n }]);
      // The legs decoded once, for the checks after the claim to take as they are.
      expect(ahead!.decoded).toEqual({ seller: decodeLeg(legs.seller, sim.token), fee: decodeLeg(legs.fee, sim.token) });
    }
  });

  it('reads nothing ahead for a leg that is not an authorization, or a ledger elsewhere', () => {
    expect(ledgerReadAhead(sim, { seller: leg(1) })).toBeUndefined();
    expect(ledgerReadAhead(sim, { seller: leg(1), fee: 'not base64 json' })).toBeUndefined();
    expect(ledgerReadAhead(sim, { seller: leg(1), fee: { ...leg(2), payload: { authorization: { from: 'anm1xyz', nonce: nonce(2) } } } })).toBeUndefined();
    const elsewhere = new UsdcLane({ token: sim.token, signers: [] } as unknown as UsdcLedger);
    expect(ledgerReadAhead(elsewhere, { seller: leg(1), fee: leg(2) })).toBeUndefined();
  });
});
