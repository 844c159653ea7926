/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/**
 * Spec "Errors" (400 rows), CreatePaymentIntentRequest limits and the list query, as a table:
 * each row names the spec line, sends one request and expects one status and code.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { idem, useHarness } from './harness.ts';

type Row = [rule: string, body: unknown, status: number, code?: string];

const url = (n: number) => `https://shop.example/${'p'.repeat(n - 'https://shop.example/'.length)}`;
const metadataOf = (bytes: number) => ({ k: 'x'.repeat(bytes - '{"k":""}'.length) });

const CREATE: Row[] = [
  ['400 invalid_json: "malformed body"', '{"amount": "1",', 400, 'invalid_json'],
  ['400 invalid_json: a body that is not JSON at all', 'amount=1', 400, 'invalid_json'],
  ['400 invalid_body: the body is not a JSON object', '[{"amount": "1"}]', 400, 'invalid_body'],
  ['400 invalid_body: no body', '', 400, 'invalid_body'],
  ['400 invalid_body: an unknown field', { amount: '1', colour: 'red' }, 400, 'invalid_body'],
  ['400 invalid_body (DESIGN §4): "Both amount and amount_nanm"', { amount: '1', amount_nanm: '1000000000' }, 400, 'invalid_body'],
  ['400 invalid_body: "exactly one of amount / amount_nanm" (neither)', { description: 'x' }, 400, 'invalid_body'],
  ['400 amount_must_be_string: "A JSON number is refused" (amount)', { amount: 1.5 }, 400, 'amount_must_be_string'],
  ['400 amount_must_be_string: "A JSON number is refused" (amount_nanm)', { amount_nanm: 1000 }, 400, 'amount_must_be_string'],
  ['400 invalid_amount: "not greater than zero"', { amount: '0' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "not greater than zero" (amount_nanm)', { amount_nanm: '0' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "not a decimal string" (negative)', { amount: '-1' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "not a decimal string" (exponent)', { amount: '1e3' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "not a decimal string" (grouping)', { amount: '1,000' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "not a decimal string" (boolean)', { amount: true }, 400, 'invalid_amount'],
  ['400 invalid_amount: amount_nanm not an integer string', { amount_nanm: '1.5' }, 400, 'invalid_amount'],
  ['400 invalid_amount: "Max 9 decimal places for ANM"', { amount: '1.0000000001' }, 400, 'invalid_amount'],
  ['Limits: "Decimal places of amount: ANM 9" (9 accepted)', { amount: '1.000000001' }, 201],
  ['400 currency_unsupported: "fiat currency and no rate source"', { amount: '10', currency: 'USD' }, 400, 'currency_unsupported'],
  ['400 invalid_body: amount_nanm "valid only with currency ANM"', { amount_nanm: '10', currency: 'USD' }, 400, 'invalid_body'],
  ['400 invalid_metadata: "not an object" (array)', { amount: '1', metadata: [1] }, 400, 'invalid_metadata'],
  ['400 invalid_metadata: "not an object" (string)', { amount: '1', metadata: 'x' }, 400, 'invalid_metadata'],
  ['400 invalid_metadata: "not an object" (null)', { amount: '1', metadata: null }, 400, 'invalid_metadata'],
  ['400 invalid_metadata: "over 4096 bytes encoded"', { amount: '1', metadata: metadataOf(4097) }, 400, 'invalid_metadata'],
  ['Limits: "metadata max 4096 bytes serialized" (4096 accepted)', { amount: '1', metadata: metadataOf(4096) }, 201],
  ['400 invalid_metadata: multibyte characters count as bytes', { amount: '1', metadata: { k: '€'.repeat(1400) } }, 400, 'invalid_metadata'],
  ['400 invalid_url: success_url "not an absolute http(s) URL" (relative)', { amount: '1', success_url: '/thanks' }, 400, 'invalid_url'],
  ['400 invalid_url: success_url "not an absolute http(s) URL" (ftp)', { amount: '1', success_url: 'ftp://shop.example/' }, 400, 'invalid_url'],
  ['400 invalid_url: cancel_url javascript:', { amount: '1', cancel_url: 'javascript:alert(1)' }, 400, 'invalid_url'],
  ['400 invalid_url: cancel_url not a string', { amount: '1', cancel_url: 42 }, 400, 'invalid_url'],
  ['400 invalid_url: success_url over 2048 chars', { amount: '1', success_url: url(2049) }, 400, 'invalid_url'],
  ['Limits: "success_url, cancel_url max 2048 chars" (2048 accepted)', { amount: '1', success_url: url(2048), cancel_url: url(2048) }, 201],
  ['Limits: "merchant_order_id max 120 chars" (121 refused)', { amount: '1', merchant_order_id: 'o'.repeat(121) }, 400, 'invalid_body'],
  ['Limits: "merchant_order_id max 120 chars" (120 accepted)', { amount: '1', merchant_order_id: 'o'.repeat(120) }, 201],
  ['Limits: "description max 500 chars" (501 refused)', { amount: '1', description: 'd'.repeat(501) }, 400, 'invalid_body'],
  ['Limits: "description max 500 chars" (500 accepted)', { amount: '1', description: 'd'.repeat(500) }, 201],
  ['400 invalid_body: description not a string', { amount: '1', description: ['x'] }, 400, 'invalid_body'],
  ['400 invalid_body: a string PostgreSQL cannot store (NUL)', { amount: '1', description: 'a\u0000b' }, 400, 'invalid_body'],
  ['400 invalid_metadata: an unpaired surrogate', '{"amount":"1","metadata":{"k":"\\ud800"}}', 400, 'invalid_metadata'],
  ...['merchant_address', 'treasury_address', 'protocol_fee', 'merchant_amount', 'protocol_fee_bps'].map(
    (f): Row => [`400 field_not_settable: "${f} … refused with 400 field_not_settable"`, { amount: '1', [f]: f === 'protocol_fee_bps' ? 0 : '1' }, 400, 'field_not_settable'],
  ),
];

const LIST: Array<[rule: string, query: string, status: number, code?: string]> = [
  ['List 2: "an unknown status value is 400 invalid_status, not an empty list"', 'status=NOPE', 400, 'invalid_status'],
  ['List 2: status is case-sensitive (one of the 11 states)', 'status=paid', 400, 'invalid_status'],
  ['List: status=PAID is a valid filter', 'status=PAID', 200],
  ['Limits: "List limit 1-100" (0 refused)', 'limit=0', 400, 'bad_request'],
  ['Limits: "List limit 1-100" (101 refused)', 'limit=101', 400, 'bad_request'],
  ['Limits: "List limit 1-100" (not an integer)', 'limit=1.5', 400, 'bad_request'],
  ['Limits: "List limit 1-100" (100 accepted)', 'limit=100', 200],
  ['400 bad_request: "malformed … parameters" (repeated parameter)', 'limit=1&limit=2', 400, 'bad_request'],
  ['400 bad_request: "malformed … parameters" (unknown parameter)', 'colour=red', 400, 'bad_request'],
  ['400 bad_request: starting_after names no intent', 'starting_after=pay_aaaaaaaaaaaaaaaaaaaaaaaa', 400, 'bad_request'],
];

describe('conformance: validation', () => {
  const h = useHarness();
  let key: string;
  beforeAll(async () => {
    key = (await h().merchant()).keys.test.secret;
  });

  it.each(CREATE)('%s', async (_rule, body, status, code) => {
    const before = await h().count('actors');
    const r = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body, headers: { 'content-type': 'application/json' } });
    expect(r.status, r.text).toBe(status);
    if (code) {
      expect(r.json.error).toMatchObject({ type: 'invalid_request', code });
      expect(await h().count('actors')).toBe(before);
    }
  });

  it.each(LIST)('%s', async (_rule, query, status, code) => {
    const r = await h().req('GET', `/api/v1/payment-intents?${query}`, { key });
    expect(r.status, r.text).toBe(status);
    if (code) expect(r.json.error.code).toBe(code);
    else expect(r.json.object).toBe('list');
  });

  it('Errors: validation happens after authentication (a bad body with a bad key is 401)', async () => {
    const r = await h().req('POST', '/api/v1/payment-intents', { idem: idem(), body: '{nope' });
    expect(r.status).toBe(401);
  });
});
