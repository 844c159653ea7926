/**
 * JSON-RPC 2.0 errors of the ANM node interface, used by the devnet server to answer and by
 * the client to throw. Callers match on `code` and `data.reason`, never on the message.
 */
export const RPC_ERRORS = {
  parse_error: -32700,
  invalid_request: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  internal_error: -32603,
  /** The transaction is invalid in itself (codec check, data.reason = TxErrorCode) or by fee. */
  tx_rejected: -32001,
  /** The nonce is already used (replay), already pending, or leaves a gap. */
  nonce_rejected: -32002,
  /** This exact transaction is already in the mempool. */
  already_known: -32003,
  /** A dev_* request the chain cannot honour (e.g. reorg deeper than the chain). */
  dev_refused: -32004,
} as const;

export type RpcErrorName = keyof typeof RPC_ERRORS;

export interface RpcErrorData {
  /** Stable machine-readable reason, e.g. `nonce_too_low`, `bad_signature`, `wrong_chain_id`. */
  reason: string;
  [key: string]: unknown;
}

export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: RpcErrorData,
  ) {
    super(message);
  }

  static of(kind: RpcErrorName, reason: string, message: string, extra: Record<string, unknown> = {}): RpcError {
    return new RpcError(RPC_ERRORS[kind], message, { reason, ...extra });
  }

  /** The `data.reason`, or the generic name of the code when the node gave none. */
  get reason(): string {
    if (this.data && typeof this.data.reason === 'string') return this.data.reason;
    const named = Object.entries(RPC_ERRORS).find(([, c]) => c === this.code);
    return named ? named[0] : 'rpc_error';
  }

  toJSON(): { code: number; message: string; data?: RpcErrorData } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}
