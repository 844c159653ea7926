/**
 * `anmpay` command line: one module per command group, loaded on demand. `--json`, `--quiet`
 * (`-q`), `--help` and `-h` may stand anywhere on the line; help is printed from help.ts.
 */
import { commands } from './commands.ts';
import { groupUsage, isGroup, renderGroupHelp, renderHelp } from './help.ts';

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const quiet = argv.some((a) => a === '--quiet' || a === '-q');
const help = argv.some((a) => a === '--help' || a === '-h');
const GLOBAL = new Set(['--json', '--quiet', '-q', '--help', '-h']);
const args = argv.filter((a) => !GLOBAL.has(a));
const [first, ...rest] = args[0] === 'help' ? args.slice(1) : args;

if (first === undefined || ((help || args[0] === 'help') && isGroup(first))) {
  process.stdout.write(first === undefined ? renderHelp() : renderGroupHelp(first));
  process.exit(0);
}
function usage(message: string): never {
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: 'usage', message } })}\n`);
  else process.stderr.write(`error (usage): ${message}\n`);
  process.exit(2);
}
const load = Object.hasOwn(commands, first) ? commands[first] : undefined;
if (!load) usage(`unknown command: ${first}; run anmpay --help for the list`);
// A group named alone (`anmpay usdc --json`): the group's commands, not `unknown usdc command "--json"`.
if (isGroup(first) && rest.length === 0) usage(`anmpay ${first} needs a command; usage: ${groupUsage(first)}`);
process.exit(await (await load()).main([...rest, ...(json ? ['--json'] : []), ...(quiet ? ['--quiet'] : [])]));
