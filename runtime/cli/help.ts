/**
 * What `anmpay --help` and `anmpay <group> --help` print, and the usage line every command
 * shows with a usage error: one catalogue, so the help and the errors cannot disagree.
 */
import { MARKET_HELP, USDC_HELP } from './help-market.ts';

export interface CommandHelp {
  name: string;
  /** Arguments and flags after `anmpay <group> <name>`. */
  args: string;
  summary: string;
  flags?: Array<[flag: string, meaning: string]>;
  /** What `--quiet` / `-q` prints alone, for commands whose one value a script goes on with. */
  quiet?: string;
  example: string;
}

interface GroupHelp {
  summary: string;
  commands: CommandHelp[];
}

const NETWORK: [string, string] = ['--network test|live', 'the network (default: that of the address, intent or wallet involved, else test)'];

export const HELP = {
  merchant: {
    summary: 'merchants, through the operator API of the running service',
    commands: [
      {
        name: 'create',
        args: '--name <name> [--email <email>]',
        summary: 'creates a merchant; prints its dashboard login and test and live keys once',
        flags: [
          ['--name <name>', 'the merchant\'s display name (required)'],
          ['--email <email>', 'dashboard login (default: made up from the name)'],
        ],
        example: 'anmpay merchant create --name "Corner Shop"',
      },
      { name: 'suspend', args: '<merchant_id>', summary: 'suspends a merchant: its keys stop working', example: 'anmpay merchant suspend mer_abc123' },
      { name: 'activate', args: '<merchant_id>', summary: 'lifts a suspension', example: 'anmpay merchant activate mer_abc123' },
      {
        name: 'origins',
        args: '<merchant_id> [--origin <url>]...',
        summary: 'replaces the origins allowed to embed the checkout widget; none clears the list',
        flags: [['--origin <url>', 'an allowed origin such as https://shop.example (repeat for several); http://localhost:* or http://127.0.0.1:* allows any local port, in test mode only']],
        example: 'anmpay merchant origins mer_abc123 --origin https://shop.example',
      },
    ],
  },
  keys: {
    summary: 'API keys of a merchant, through the operator API',
    commands: [
      {
        name: 'create',
        args: '--merchant <id> --mode test|live [--kind secret|publishable]',
        summary: 'makes a new key; prints it once',
        quiet: 'the key',
        flags: [
          ['--merchant <id>', 'the merchant (required)'],
          ['--mode test|live', 'which mode the key works in (required)'],
          ['--kind secret|publishable', 'secret (server side, default) or publishable (pages)'],
        ],
        example: 'anmpay keys create --merchant mer_abc123 --mode test',
      },
      { name: 'revoke', args: '<key_id|key>', summary: 'revokes a key by its id or by the key itself', example: 'anmpay keys revoke key_abc123' },
    ],
  },
  payout: {
    summary: 'where a merchant is paid',
    commands: [
      {
        name: 'set',
        args: '--merchant <id> --mode test|live --address <addr>',
        summary: 'sets the payout address of one mode (live intents need one)',
        flags: [
          ['--merchant <id>', 'the merchant (required)'],
          ['--mode test|live', 'the mode (required)'],
          ['--address <addr>', 'an address of that mode\'s network: anm1… (live) or tanm1… (test) (required)'],
        ],
        example: 'anmpay payout set --merchant mer_abc123 --mode live --address anm1…',
      },
      {
        name: 'verify',
        args: '--challenge <c> --wallet <file>',
        summary: 'prints the signature that proves the payout address to the dashboard (paste it there)',
        flags: [
          ['--challenge <c>', 'the challenge the dashboard shows (required)'],
          ['--wallet <file>', 'the wallet file of the payout address (required); its key never leaves this machine'],
        ],
        example: 'anmpay payout verify --challenge chl_abc123 --wallet payout.json',
        quiet: 'the signature',
      },
    ],
  },
  webhook: {
    summary: 'webhook endpoints of a merchant, through the operator API',
    commands: [
      {
        name: 'set',
        args: '--merchant <id> --mode test|live --url <url>',
        summary: 'sets the endpoint of one mode; prints a new signing secret once',
        flags: [
          ['--merchant <id>', 'the merchant (required)'],
          ['--mode test|live', 'the mode (required)'],
          ['--url <url>', 'where events are POSTed (required)'],
        ],
        example: 'anmpay webhook set --merchant mer_abc123 --mode test --url https://shop.example/hooks',
      },
      {
        name: 'rotate',
        args: '--merchant <id> --mode test|live [--grace <seconds>]',
        summary: 'new signing secret; the old one keeps signing during the grace period',
        flags: [
          ['--merchant <id>', 'the merchant (required)'],
          ['--mode test|live', 'the mode (required)'],
          ['--grace <seconds>', 'how long the previous secret keeps signing (default: the service\'s, 24 h)'],
        ],
        example: 'anmpay webhook rotate --merchant mer_abc123 --mode test --grace 3600',
      },
      {
        name: 'list',
        args: '--merchant <id> [--mode test|live]',
        summary: 'lists the endpoints and how many secrets sign for each',
        flags: [
          ['--merchant <id>', 'the merchant (required)'],
          ['--mode test|live', 'only this mode'],
        ],
        example: 'anmpay webhook list --merchant mer_abc123',
      },
    ],
  },
  wallet: {
    summary: 'ANM wallets on the devnet: keys, balances, paying intents',
    commands: [
      {
        name: 'create',
        args: '[--network test|live] [--out <file>]',
        summary: 'new ML-DSA-65 key in a wallet file (mode 0600, never overwritten); prints its address',
        quiet: 'the address',
        flags: [
          ['--network test|live', 'test (tanm1… addresses, default) or live (anm1…)'],
          ['--out <file>', 'where to write it (default $ANMPAY_DATA_DIR/wallets/<address>.json)'],
        ],
        example: 'anmpay wallet create',
      },
      {
        name: 'balance',
        args: '<address> [--network test|live]',
        summary: 'balance (nANM) and nonce of an address',
        flags: [NETWORK],
        quiet: 'the balance in nANM',
        example: 'anmpay wallet balance tanm1…',
      },
      {
        name: 'fund',
        args: '<address> <nanm> [--network test|live]',
        summary: 'credits an address from the devnet faucet (1 ANM = 1000000000 nANM)',
        flags: [NETWORK],
        quiet: 'the new balance in nANM',
        example: 'anmpay wallet fund tanm1… 10000000000',
      },
      {
        name: 'pay',
        args: '<intent_id> --wallet <file> [--amount-nanm <n>] [--fee-nanm <n>] [--force] [--network test|live]',
        summary: 'pays an intent (merchant amount + protocol fee, with its reference) after checking the wallet holds enough',
        quiet: 'the transaction hash',
        flags: [
          ['--wallet <file>', 'the paying wallet (required)'],
          ['--amount-nanm <n>', 'pay this total instead, both legs scaled (under- or overpayment)'],
          ['--fee-nanm <n>', 'network fee, burned (default 0)'],
          ['--force', 'send even when the balance is short: the node includes it with a failed receipt'],
          NETWORK,
        ],
        example: 'anmpay wallet pay pay_abc123 --wallet .data/wallets/tanm1….json',
      },
    ],
  },
  refund: {
    summary: 'refunds signed with the merchant\'s payout wallet',
    commands: [
      {
        name: 'sign',
        args: '<refund_id> --wallet <file> [--fee-nanm <n>] [--network test|live]',
        summary: 'signs the refund\'s unsigned transfer and submits it (needs ANMPAY_API_KEY, the merchant\'s secret key)',
        quiet: 'the transaction hash',
        flags: [
          ['--wallet <file>', 'the payout wallet the refund is sent from (required)'],
          ['--fee-nanm <n>', 'network fee (default: the one in the refund\'s signing payload, else 0)'],
          NETWORK,
        ],
        example: 'ANMPAY_API_KEY=ask_live_… anmpay refund sign re_abc123 --wallet payout.json',
      },
    ],
  },
  devnet: {
    summary: 'the development ANM node: blocks, reorgs, status, running one',
    commands: [
      { name: 'mine', args: '<n> [--network test|live]', summary: 'mines n blocks now (empty ones too)', flags: [['--network test|live', 'which chain (default test)']], example: 'anmpay devnet mine 12' },
      {
        name: 'reorg',
        args: '<depth> [--drop <tx_hash>]... [--network test|live]',
        summary: 'replaces the last <depth> blocks; their transactions go back to the mempool unless dropped',
        flags: [
          ['--drop <tx_hash>', 'discard this transaction for good (repeat for several)'],
          ['--network test|live', 'which chain (default test)'],
        ],
        example: 'anmpay devnet reorg 2 --drop 3f9a…',
      },
      { name: 'status', args: '[--network test|live]', summary: 'head, pending transactions, block interval', flags: [['--network test|live', 'which chain (default test)']], example: 'anmpay devnet status' },
      {
        name: 'serve',
        args: '[--port <port>] [--host <host>] [--block-ms <ms>] [--data <dir>]',
        summary: 'runs both networks\' nodes (/test and /live) in this process until Ctrl-C',
        flags: [
          ['--port <port>', 'listen port (default $DEVNET_PORT, 3002; 0 picks a free one)'],
          ['--host <host>', 'listen address (default $HOST, 127.0.0.1)'],
          ['--block-ms <ms>', 'a block every <ms> (default $DEVNET_BLOCK_MS, 2000; 0 mines on request only)'],
          ['--data <dir>', 'keep the chains in <dir>/test and <dir>/live across restarts (default: memory only)'],
        ],
        example: 'anmpay devnet serve --data .data/devnet',
      },
    ],
  },
  market: MARKET_HELP,
  usdc: USDC_HELP,
} satisfies Record<string, GroupHelp>;

export type GroupName = keyof typeof HELP;

export function isGroup(name: string): name is GroupName {
  return Object.hasOwn(HELP, name);
}

/** `anmpay <group> <command> <args> [--json]`, for usage errors. */
export function usageOf(group: GroupName, command: string): string {
  const c = (HELP[group].commands as CommandHelp[]).find((x) => x.name === command);
  if (!c) throw new Error(`no help for anmpay ${group} ${command}`);
  return `anmpay ${group} ${c.name} ${c.args} ${c.quiet ? '[--json | -q]' : '[--json]'}`.replace(/ {2,}/g, ' ');
}

/** Every command of a group, for an unknown subcommand. */
export function groupUsage(group: GroupName): string {
  return HELP[group].commands.map((c) => usageOf(group, c.name)).join(' | ');
}

const COMMON = [
  'Every command takes --json (anywhere on the line): one JSON line on stdout, errors as {"error":{"code","message"}}.',
  'Commands marked -q take --quiet (-q): only the one value a script goes on with, e.g. ADDR=$(anmpay wallet create -q).',
  'Exit codes: 0 done, 1 failed, 2 usage error.',
];

const ENVIRONMENT = [
  'Environment:',
  '  ANMPAY_URL            the service (default http://127.0.0.1:3000)',
  '  ANMPAY_DEVNET_URL     the devnet (default http://127.0.0.1:3002; a URL ending in /test or /live works too)',
  '  ANMPAY_MARKET_URL     the marketplace (default http://127.0.0.1:3001)',
  '  ANMPAY_API_KEY        a merchant secret key, for refund sign',
  '  ANMPAY_OPERATOR_TOKEN the operator token (default: read from $ANMPAY_DATA_DIR/operator-token)',
  '  ANMPAY_DATA_DIR       wallets and the operator token (default .data)',
];

export function renderHelp(): string {
  const lines = ['usage: anmpay <group> <command> [arguments] [--json]', '       anmpay <group> --help   (every flag, with examples)', ''];
  for (const [group, g] of Object.entries(HELP) as Array<[GroupName, GroupHelp]>) {
    lines.push(`${group}: ${g.summary}`);
    for (const c of g.commands) lines.push(`  anmpay ${group} ${c.name} ${c.args}${c.quiet ? ' [-q]' : ''}`.trimEnd(), `      ${c.summary}`);
    lines.push('');
  }
  lines.push(...COMMON, '', ...ENVIRONMENT, '', 'Example: anmpay wallet create && anmpay wallet fund <address> 10000000000', '');
  return lines.join('\n');
}

export function renderGroupHelp(group: GroupName): string {
  const g: GroupHelp = HELP[group];
  const lines = [`anmpay ${group}: ${g.summary}`, ''];
  for (const c of g.commands) {
    lines.push(`anmpay ${group} ${c.name} ${c.args}${c.quiet ? ' [-q]' : ''}`.trimEnd(), `  ${c.summary}`);
    const flags: Array<[string, string]> = [...(c.flags ?? []), ...(c.quiet ? [['-q, --quiet', `print only ${c.quiet}`] as [string, string]] : [])];
    const width = Math.max(0, ...flags.map(([f]) => f.length));
    for (const [flag, meaning] of flags) lines.push(`    ${flag.padEnd(width)}  ${meaning}`);
    lines.push(`  example: ${c.example}`, '');
  }
  lines.push(...COMMON, '');
  return lines.join('\n');
}
