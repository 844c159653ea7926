/** Help of the marketplace groups (`anmpay market …`, `anmpay usdc …`), part of the one catalogue in help.ts. */
import type { CommandHelp } from './help.ts';

const ASSET: [string, string] = ['--asset USDC|ANM', 'the lane to pay on (default USDC)'];
const MAX_PRICE: [string, string] = ['--max-price <decimal>', 'a ceiling on the TOTAL (seller price + fee), in the asset\'s units'];
const LATENCY: [string, string] = ['--max-latency-ms <n>', 'a ceiling on the listing\'s p50 latency (listings without scans rank last)'];
const RESOURCE: [string, string] = ['--resource <res_id>', 'quote this listing (from search or its fragment) instead of the capability\'s best match; the capability may then be left out'];

export const MARKET_HELP: { summary: string; commands: CommandHelp[] } = {
  summary: 'the pay-per-call marketplace on ANMPAY_MARKET_URL: list, find, quote, buy and execute',
  commands: [
    {
      name: 'register',
      args: '--name <name> --endpoint <url> [--usdc-price <decimal>] [--anm-price <decimal>] [--key <file>] [--wallet <file>] [--method <verb>] [--description <text>] [--category <word>] [--tag <word>]... [--docs <url>]',
      summary: 'lists (or, with the same key, updates) a paid endpoint, signed by the key that controls each pay_to',
      quiet: 'the resource_id',
      flags: [
        ['--name <name>', 'the listing\'s name (required)'],
        ['--endpoint <url>', 'the seller\'s paid x402 endpoint (required)'],
        ['--usdc-price <decimal>', 'seller price in USDC (6 places); paid to the --key\'s address'],
        ['--anm-price <decimal>', 'seller price in ANM (9 places); paid to the --wallet\'s live address'],
        ['--key <file>', 'EVM key file (anmpay usdc create) that signs for USDC (EIP-191)'],
        ['--wallet <file>', 'ANM wallet file (anmpay wallet create) that signs for ANM (ML-DSA-65)'],
        ['--method <verb>', 'HTTP method of the endpoint (default GET)'],
        ['--description <text>', 'what the endpoint does (searched)'],
        ['--category <word>', 'a category (searched)'],
        ['--tag <word>', 'a tag (searched; repeat for several)'],
        ['--docs <url>', 'documentation URL'],
      ],
      example: 'anmpay market register --name "Weather forecast" --endpoint https://seller.example/weather --usdc-price 0.01 --key seller.json',
    },
    {
      name: 'search',
      args: '[<words>...] [--max-price <decimal>] [--asset USDC|ANM] [--limit <n>]',
      summary: 'listings matching the words (name, description, category, tags), best first; free',
      quiet: 'the resource_ids, best first, one a line',
      flags: [MAX_PRICE, ['--asset USDC|ANM', 'only listings priced in this asset'], ['--limit <n>', 'at most n listings (default 20, at most 100)']],
      example: 'anmpay market search weather forecast --max-price 0.05 --asset USDC',
    },
    {
      name: 'quote',
      args: '<capability>|--resource <res_id> [--max-price <decimal>] [--asset USDC|ANM] [--max-latency-ms <n>]',
      summary: 'the best listing for the capability (or the --resource listing), as a purchase intent with its price split and the two legs to sign; never charges',
      quiet: 'the intent_id',
      flags: [RESOURCE, MAX_PRICE, ASSET, LATENCY],
      example: 'anmpay market quote --resource res_3f9a… --max-price 0.05',
    },
    {
      name: 'buy',
      args: '<capability>|--resource <res_id> [--key <file>] [--wallet <file>] [--max-price <decimal>] [--asset USDC|ANM] [--max-latency-ms <n>] [--idempotency-key <key>]',
      summary: 'quote, sign both legs (seller and fee), purchase; prints the seller leg as a ready x402 header for calling the seller',
      quiet: 'the seller payment header value, for the header the seller\'s x402 version names (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2)',
      flags: [
        ['--key <file>', 'the buyer\'s EVM key file, for USDC (required with USDC)'],
        ['--wallet <file>', 'the buyer\'s ANM wallet file, for ANM (required with ANM); pays from its live anm1… address, nonces from $ANMPAY_DEVNET_URL/live'],
        RESOURCE,
        MAX_PRICE,
        ASSET,
        LATENCY,
        ['--idempotency-key <key>', 'send this idempotency-key (default: a new UUID, printed); retry with it to get the same answer'],
      ],
      example: 'anmpay market buy "weather forecast" --max-price 0.05 --key buyer.json',
    },
    {
      name: 'execute',
      args: '<capability>|--resource <res_id> [--key <file>] [--wallet <file>] [--body <json>] [--max-price <decimal>] [--asset USDC|ANM] [--max-latency-ms <n>]',
      summary: 'quote, pay the seller\'s own 402 with an x402 client (USDC: stock @x402/evm; ANM: exact-anm), sign the fee leg, and have the marketplace call the seller; prints its answer. Signs nothing when the 402 asks another amount, payee, asset or network than the quote\'s seller leg; exits 1 when the seller answered an error (its answer still printed)',
      quiet: 'the seller\'s body',
      flags: [
        ['--key <file>', 'the buyer\'s EVM key file, for USDC (required with USDC)'],
        ['--wallet <file>', 'the buyer\'s ANM wallet file, for ANM (required with ANM); the seller transfer and the fee at its next two nonces on $ANMPAY_DEVNET_URL/live'],
        ['--body <json>', 'a JSON object sent to the seller (default {}; not sent to a GET listing)'],
        RESOURCE,
        MAX_PRICE,
        ASSET,
        LATENCY,
      ],
      example: 'anmpay market execute "weather forecast" --body \'{"city":"Lisbon"}\' --key buyer.json',
    },
    {
      name: 'scan',
      args: '<resource_id>',
      summary: 'probes a listing now (operator token: ANMPAY_OPERATOR_TOKEN or $ANMPAY_DATA_DIR/operator-token) and prints the probe and the listing\'s new status and score',
      quiet: 'the probe\'s outcome (ok, mismatch, pay_to_mismatch, malformed, no_payment_required, http_error, server_error, timeout, unreachable, refused)',
      example: 'anmpay market scan res_3f9a…',
    },
  ],
};

export const USDC_HELP: { summary: string; commands: CommandHelp[] } = {
  summary: 'keys and play money on the marketplace\'s simulated USDC ledger (ANMPAY_MARKET_URL)',
  commands: [
    {
      name: 'create',
      args: '[--out <file>]',
      summary: 'new EVM key in a key file (mode 0600, never overwritten); prints its address',
      quiet: 'the address',
      flags: [['--out <file>', 'where to write it (default $ANMPAY_DATA_DIR/wallets/usdc/<address>.json)']],
      example: 'anmpay usdc create --out buyer.json',
    },
    {
      name: 'fund',
      args: '<address> <usdc>',
      summary: 'credits an address from the simulated ledger\'s faucet (at most 1,000,000 USDC a call)',
      quiet: 'the new balance in atomic units (6 decimals)',
      example: 'anmpay usdc fund 0xAbC… 25',
    },
    {
      name: 'balance',
      args: '<address>',
      summary: 'an address\'s balance on the simulated ledger',
      quiet: 'the balance in atomic units (6 decimals)',
      example: 'anmpay usdc balance 0xAbC…',
    },
  ],
};
