/**
 * Typed errors of the ANM chain codec. Codes are stable strings: the devnet's JSON-RPC and
 * the indexer pass them on unchanged, so tests and callers match on `code`, never on text.
 */
export type AddressErrorCode =
  | 'bad_format' // not a string, mixed case, no separator, character outside the bech32 set
  | 'bad_checksum' // bech32m checksum does not verify
  | 'wrong_hrp' // well-formed address of another network
  | 'wrong_length'; // payload is not a 32-byte SHA-256 hash

export class AddressError extends Error {
  override readonly name = 'AddressError';
  constructor(
    readonly code: AddressErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type TxErrorCode =
  | 'malformed' // bytes do not parse as a signed transaction (or trailing bytes, bad hex)
  | 'wrong_chain_id'
  | 'wrong_hrp' // an output pays an address of another network
  | 'bad_address' // an output address does not decode or is not in canonical lowercase form
  | 'no_outputs'
  | 'too_many_outputs'
  | 'amount_out_of_range' // zero output, value over u64, or outputs + fee overflow u64
  | 'bad_reference'
  | 'bad_public_key' // not an ML-DSA-65 public key (length)
  | 'bad_signature';

export class TxError extends Error {
  override readonly name = 'TxError';
  constructor(
    readonly code: TxErrorCode,
    message: string,
  ) {
    super(message);
  }
}
