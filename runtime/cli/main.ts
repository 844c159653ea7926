/** `anmpay` command line. Subcommands arrive with the issues that need them. */
const [cmd] = process.argv.slice(2);
if (!cmd || cmd === 'help' || cmd === '--help') {
  process.stdout.write('usage: anmpay <command> [--json]\n');
  process.exit(0);
}
process.stderr.write(`unknown command: ${cmd}\n`);
process.exit(2);
