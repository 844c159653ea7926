/**
 * `anmpay devnet mine <n> | reorg <depth> [--drop <tx_hash>]... | status | serve`. The first
 * three talk to the devnet at ANMPAY_DEVNET_URL (+ /test or /live); `serve` runs both
 * networks' nodes in this process until SIGINT/SIGTERM.
 */
import path from 'node:path';
import { configSchema } from '../config.ts';
import { startDevnetServer } from '../chain/devnet/server.ts';
import { intArg, list, networkOpt, parse, positionals, str, usageError } from './args.ts';
import { rpcFor } from './env.ts';
import { groupUsage, usageOf } from './help.ts';
import { runCommand, toJson, type CommandResult } from './output.ts';

const USAGE = {
  mine: usageOf('devnet', 'mine'),
  reorg: usageOf('devnet', 'reorg'),
  status: usageOf('devnet', 'status'),
  serve: usageOf('devnet', 'serve'),
};
const NET = { network: { type: 'string' } } as const;

/** Entry from the dispatcher in main.ts. */
export function main(argv: string[]): Promise<number> {
  return runCommand(run, argv);
}

async function run(argv: string[]): Promise<CommandResult | undefined> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'mine': {
      const a = parse(rest, NET, USAGE.mine);
      const n = intArg(positionals(a, 1, USAGE.mine)[0]!, 'n', 1);
      const network = networkOpt(a) ?? 'test';
      const r = await rpcFor(network).mine(n);
      return { data: { network, ...r }, text: `mined ${r.blocks.length} block(s) on ${network}; head ${r.head.height} ${r.head.hash}` };
    }
    case 'reorg': {
      const a = parse(rest, { ...NET, drop: { type: 'string', multiple: true } }, USAGE.reorg);
      const depth = intArg(positionals(a, 1, USAGE.reorg)[0]!, 'depth', 1);
      const network = networkOpt(a) ?? 'test';
      const r = await rpcFor(network).reorg(depth, list(a, 'drop'));
      return {
        data: { network, ...r },
        text:
          `reorg on ${network}: removed ${r.removed.length} block(s) above height ${r.fork_height}, mined ${r.added.length}; head ${r.head.height} ${r.head.hash}\n` +
          `returned to mempool: ${r.returned.length}, dropped: ${r.dropped.length ? r.dropped.join(', ') : 'none'}`,
      };
    }
    case 'status': {
      const a = parse(rest, NET, USAGE.status);
      positionals(a, 0, USAGE.status);
      const s = await rpcFor(networkOpt(a) ?? 'test').status();
      return {
        data: s,
        text: `${s.network} (chain id ${s.chain_id}, hrp ${s.hrp}): head ${s.head.height} ${s.head.hash}, ${s.pending} pending, ${s.block_ms ? `a block every ${s.block_ms} ms` : 'mining on request only'}`,
      };
    }
    case 'serve':
      return serve(rest);
    default:
      throw usageError(`unknown devnet command ${JSON.stringify(sub ?? '')}`, groupUsage('devnet'));
  }
}

async function serve(rest: string[]): Promise<undefined> {
  const a = parse(rest, { port: { type: 'string' }, host: { type: 'string' }, 'block-ms': { type: 'string' }, data: { type: 'string' } }, USAGE.serve);
  positionals(a, 0, USAGE.serve);
  const env = configSchema.pick({ DEVNET_PORT: true, DEVNET_BLOCK_MS: true, HOST: true }).parse(process.env);
  const port = str(a, 'port') === undefined ? env.DEVNET_PORT : intArg(str(a, 'port')!, '--port', 0);
  const blockMs = str(a, 'block-ms') === undefined ? env.DEVNET_BLOCK_MS : intArg(str(a, 'block-ms')!, '--block-ms', 0);
  const dataDir = str(a, 'data');
  const server = await startDevnetServer({ port, host: str(a, 'host') ?? env.HOST, blockMs, ...(dataDir !== undefined && { dataDir }) });
  const ready = {
    url: server.url,
    test: `${server.url}/test`,
    live: `${server.url}/live`,
    block_ms: blockMs,
    data: dataDir === undefined ? null : path.resolve(dataDir),
    heads: { test: server.nodes.test.height, live: server.nodes.live.height },
  };
  const kept = ready.data ? `chains in ${ready.data} (heads: test ${ready.heads.test}, live ${ready.heads.live})` : 'chains in memory (--data <dir> keeps them)';
  process.stdout.write(
    a.values.json
      ? `${toJson(ready)}\n`
      : `devnet listening: test ${ready.test} (chain id 1001), live ${ready.live} (chain id 1); ${blockMs ? `a block every ${blockMs} ms` : 'mining on request only'}; ${kept}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return undefined;
}
