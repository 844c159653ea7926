/**
 * What the viem USDC ledger calls on the token (USDC v2's EIP-3009 surface), and how a failed
 * call reads as the x402 SDK's reason codes: USDC's revert strings, matched as @x402/evm's
 * facilitator matches them (its `parseEip3009TransferError`).
 */
import { BaseError, ContractFunctionRevertedError, parseAbi } from 'viem';

export const EIP3009_ABI = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);

/** A revert string as the SDK's reason code. */
export function revertReason(message: string): string {
  if (/authorization.*(expired|valid before)/i.test(message)) return 'invalid_exact_evm_payload_authorization_valid_before';
  if (/authorization.*not.*valid/i.test(message)) return 'invalid_exact_evm_payload_authorization_valid_after';
  if (/authorization.*used/i.test(message)) return 'invalid_exact_evm_nonce_already_used';
  if (/transfer.*exceeds.*balance|insufficient.*balance/i.test(message)) return 'invalid_exact_evm_insufficient_balance';
  if (/invalid.*signature/i.test(message)) return 'invalid_exact_evm_signature';
  return 'invalid_exact_evm_transaction_failed';
}

/**
 * A thrown call as a settlement failure: a revert is final; anything else (the node
 * unreachable, a dropped connection) is transient, the authorization stays usable and the
 * settlement is tried again.
 */
export function settleFailure(e: unknown): { reason: string; message: string; transient: boolean } {
  const first = (m: string): string => m.split('\n')[0] ?? m;
  if (e instanceof BaseError) {
    const revert = e.walk((x) => x instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) {
      const text = revert.reason ?? revert.shortMessage;
      return { reason: revertReason(text), message: text, transient: false };
    }
    return { reason: 'settlement_pending', message: first(e.shortMessage), transient: true };
  }
  return { reason: 'settlement_pending', message: first(e instanceof Error ? e.message : String(e)), transient: true };
}
