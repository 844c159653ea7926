/** The `anmpay` command groups, each a module with `main(argv)`, loaded only when named. */
type Command = () => Promise<{ main: (argv: string[]) => Promise<number> }>;

export const commands: Record<string, Command> = {
  merchant: () => import('./merchant.ts'),
  keys: () => import('./keys.ts'),
  payout: () => import('./payout.ts'),
  webhook: () => import('./webhook.ts'),
  wallet: () => import('./wallet.ts'),
  refund: () => import('./refund.ts'),
  devnet: () => import('./devnet.ts'),
  market: () => import('./market.ts'),
  usdc: () => import('./usdc.ts'),
};
