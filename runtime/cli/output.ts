/**
 * How every `anmpay` command reports: a command returns `{data, text, quiet?}`; with `--json`
 * the data is printed as one JSON line (bigints as decimal strings), with `--quiet` (`-q`) the
 * one value a shell script needs (`ADDR=$(anmpay wallet create -q)`), otherwise the text. Errors
 * become `{"error":{"code","message"}}` on stdout with `--json` (text on stderr without) and
 * a non-zero exit: 2 for usage errors, 1 for everything else. A command whose result is
 * printed and still failed (`market execute` with a seller error) prints it, then its error
 * on stderr (`{"error":…}` with `--json`).
 */
import { TerminalError } from '../errors.ts';
import { AddressError, TxError } from '../../machines/chain/index.ts';
import { WalletFileError } from '../chain/codec/keys.ts';
import { RpcError } from '../chain/rpc-errors.ts';
import { RpcTransportError } from '../chain/rpc-client.ts';
import { PaymentBuildError } from '../chain/payment-tx.ts';
import { ChainLogError } from '../chain/devnet/chain-log.ts';
import { DevnetLockError } from '../chain/devnet/lock.ts';

export class CliError extends TerminalError {
  constructor(
    code: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(code, message);
  }
}

export interface CommandResult {
  data: Record<string, unknown>;
  text: string;
  /** With `--quiet` / `-q`: the one value a script goes on with (an address, a hash), alone on its line. */
  quiet?: string;
  /**
   * The command printed its result and still failed (a seller that answered an error): the
   * result goes to stdout as usual, this error to stderr, and the exit code is its.
   */
  failed?: CliError;
}

/** A command's body: gets the arguments after its name; `undefined` = already printed (long-running commands). */
export type CommandRun = (argv: string[]) => Promise<CommandResult | undefined>;

export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export function toCliError(e: unknown): CliError {
  if (e instanceof CliError) return e;
  if (e instanceof RpcError) return new CliError(e.reason, e.message);
  if (e instanceof RpcTransportError) return new CliError('node_unreachable', e.message);
  if (e instanceof WalletFileError) return new CliError('bad_wallet_file', e.message);
  if (e instanceof AddressError) return new CliError(e.code === 'wrong_hrp' ? 'wrong_hrp' : 'bad_address', e.message);
  if (e instanceof TxError || e instanceof PaymentBuildError) return new CliError(e.code, e.message);
  if (e instanceof DevnetLockError) return new CliError('devnet_locked', e.message);
  if (e instanceof ChainLogError) return new CliError('bad_chain_log', e.message);
  const err = e as NodeJS.ErrnoException;
  if (err && typeof err === 'object' && typeof err.code === 'string' && typeof err.message === 'string') {
    return new CliError(err.code === 'ENOENT' ? 'file_not_found' : err.code === 'EEXIST' ? 'file_exists' : 'io_error', err.message);
  }
  return new CliError('internal_error', e instanceof Error ? e.message : String(e));
}

/** Runs one command and returns the exit code (main.ts's `main(argv)` contract); all printing happens here. */
export async function runCommand(run: CommandRun, argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const quiet = !json && (argv.includes('--quiet') || argv.includes('-q'));
  try {
    const result = await run(argv);
    if (result) process.stdout.write(json ? `${toJson(result.data)}\n` : `${quiet && result.quiet !== undefined ? result.quiet : result.text}\n`);
    if (!result?.failed) return 0;
    // stdout holds the result; the failure goes to stderr, as JSON under --json like every error.
    const { code, message } = result.failed;
    process.stderr.write(json ? `${toJson({ error: { code, message } })}\n` : `error (${code}): ${message}\n`);
    return result.failed.exitCode;
  } catch (e) {
    const err = toCliError(e);
    if (json) process.stdout.write(`${toJson({ error: { code: err.code, message: err.message } })}\n`);
    else process.stderr.write(`error (${err.code}): ${err.message}\n`);
    return err.exitCode;
  }
}
