/**
 * A command group named without a command (`anmpay usdc --json`): a usage error listing the
 * group's commands, exit 2 (`anmpay --help`: "Exit codes: … 2 usage error"), in the JSON error
 * envelope under --json (DESIGN §6: `--json` on every command), whatever the group.
 */
import { describe, expect, it } from 'vitest';
import { groupUsage, HELP, type GroupName } from '../../runtime/cli/help.ts';
import { runCli } from '../helpers/cli.ts';

const groups = Object.keys(HELP) as GroupName[];

describe('anmpay <group> without a command', () => {
  it.each(groups)('anmpay %s --json: {"error":{"code":"usage"}} naming the group\'s commands, exit 2', async (group) => {
    const r = await runCli([group, '--json'], {});
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'usage', message: `anmpay ${group} needs a command; usage: ${groupUsage(group)}` } });
    expect(r.stdout).not.toContain('"--json"');
  });

  it('without --json: one line on stderr, nothing on stdout', async () => {
    const r = await runCli(['usdc'], {});
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(`error (usage): anmpay usdc needs a command; usage: ${groupUsage('usdc')}\n`);
  });
});
