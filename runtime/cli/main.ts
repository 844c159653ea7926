/** `anmpay` command line. Subcommands arrive with the issues that need them: one line each here. */
type Command = () => Promise<{ main: (argv: string[]) => Promise<number> }>;

const commands: Record<string, Command> = {
  webhook: () => import('./webhook.ts'),
  wallet: () => import('./wallet.ts'),
  refund: () => import('./refund.ts'),
  devnet: () => import('./devnet.ts'),
  merchant: () => import('./merchant.ts'),
  keys: () => import('./keys.ts'),
  payout: () => import('./payout.ts'),
};

const [cmd, ...rest] = process.argv.slice(2);
if (!cmd || cmd === 'help' || cmd === '--help') {
  process.stdout.write(`usage: anmpay <command> [--json]\ncommands: ${Object.keys(commands).join(', ')}\n`);
  process.exit(0);
}
const load = commands[cmd];
if (!load) {
  if (rest.includes('--json')) process.stdout.write(`${JSON.stringify({ error: { code: 'usage', message: `unknown command: ${cmd}` } })}\n`);
  else process.stderr.write(`unknown command: ${cmd}\n`);
  process.exit(2);
}
process.exit(await (await load()).main(rest));
