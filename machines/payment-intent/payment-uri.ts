/**
 * The payment URI of an intent, shown as a QR code and a link by the hosted checkout
 * (docs/checkout.md "Payment URI", ADR 0014):
 *
 *   anm:<payment_address>?amount=<total>&merchant_amount=<m>&fee_amount=<f>&fee_to=<treasury>&ref=<reference>
 *
 * `amount` is the TOTAL (m + f), so a wallet that reads only the address and `amount` sends
 * the whole charge rather than the merchant's share; a wallet that reads the legs builds the
 * two outputs and checks that they add up to `amount`. Every value comes from an alphabet
 * that needs no percent-encoding (bech32m, digits, `pr1:` + base32; `:` is legal in a query).
 */

export interface PaymentUriParts {
  payment_address: string;
  /** merchant_amount + protocol_fee, nANM. */
  amount: bigint;
  merchant_amount: bigint;
  protocol_fee: bigint;
  treasury_address: string;
  payment_reference: string;
}

interface UriSource {
  payment_address: string;
  merchant_amount: string;
  protocol_fee: string;
  treasury_address: string;
  payment_reference: string;
}

export function paymentUri(ctx: UriSource): string {
  const total = BigInt(ctx.merchant_amount) + BigInt(ctx.protocol_fee);
  return (
    `anm:${ctx.payment_address}?amount=${total}&merchant_amount=${ctx.merchant_amount}` +
    `&fee_amount=${ctx.protocol_fee}&fee_to=${ctx.treasury_address}&ref=${ctx.payment_reference}`
  );
}

export class PaymentUriError extends Error {
  override readonly name = 'PaymentUriError';
}

const NANM = /^(0|[1-9][0-9]*)$/;
const REQUIRED = ['amount', 'merchant_amount', 'fee_amount', 'fee_to', 'ref'] as const;

/**
 * What a wallet does with the URI: read every parameter by name, refuse one that is missing,
 * repeated or not a whole nANM amount, and refuse legs that do not add up to `amount`.
 */
export function parsePaymentUri(uri: string): PaymentUriParts {
  const m = /^anm:([^?]+)\?(.*)$/.exec(uri);
  if (!m) throw new PaymentUriError('not an anm: payment URI with parameters');
  const params = new Map<string, string>();
  for (const pair of m[2]!.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (params.has(name)) throw new PaymentUriError(`parameter ${name} appears twice`);
    params.set(name, eq < 0 ? '' : pair.slice(eq + 1));
  }
  for (const name of REQUIRED) if (!params.get(name)) throw new PaymentUriError(`parameter ${name} is missing`);
  const nanm = (name: string): bigint => {
    const v = params.get(name)!;
    if (!NANM.test(v)) throw new PaymentUriError(`${name} must be a whole number of nANM, got ${JSON.stringify(v)}`);
    return BigInt(v);
  };
  const parts: PaymentUriParts = {
    payment_address: m[1]!,
    amount: nanm('amount'),
    merchant_amount: nanm('merchant_amount'),
    protocol_fee: nanm('fee_amount'),
    treasury_address: params.get('fee_to')!,
    payment_reference: params.get('ref')!,
  };
  if (parts.merchant_amount + parts.protocol_fee !== parts.amount) {
    throw new PaymentUriError(`the legs (${parts.merchant_amount} + ${parts.protocol_fee}) do not add up to amount ${parts.amount}`);
  }
  return parts;
}
