/** A command group's `main(argv)` from a table of its subcommands; an unknown one is a usage error listing the group's commands. */
import { usageError } from './args.ts';
import { groupUsage, type GroupName } from './help.ts';
import { runCommand, type CommandResult } from './output.ts';

export type Subcommand = (rest: string[]) => Promise<CommandResult>;

export function groupMain(group: GroupName, subcommands: Record<string, Subcommand>): (argv: string[]) => Promise<number> {
  return (argv) =>
    runCommand(async ([sub, ...rest]) => {
      const run = sub !== undefined && Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
      if (!run) throw usageError(`unknown ${group} command ${JSON.stringify(sub ?? '')}`, groupUsage(group));
      return run(rest);
    }, argv);
}
