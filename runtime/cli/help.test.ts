/**
 * `anmpay --help` and `anmpay <group> --help` (issue 19 item 5): every command with its
 * arguments, every flag explained, an example per command. Snapshots make any change to
 * the help a reviewed change; the checks below keep the catalogue complete.
 */
import { describe, expect, it } from 'vitest';
import { probeOutcome } from '../../machines/listing/events.ts';
import { commands } from './commands.ts';
import { HELP, groupUsage, type CommandHelp, renderGroupHelp, renderHelp, usageOf, type GroupName } from './help.ts';

const groups = Object.keys(HELP) as GroupName[];

describe('anmpay help', () => {
  it('has a help entry for every command group and no other', () => {
    expect(groups.sort()).toEqual(Object.keys(commands).sort());
  });

  it('anmpay --help matches its snapshot', async () => {
    await expect(renderHelp()).toMatchFileSnapshot('__snapshots__/help.txt');
  });

  it.each(groups)('anmpay %s --help matches its snapshot', async (group) => {
    await expect(renderGroupHelp(group)).toMatchFileSnapshot(`__snapshots__/help-${group}.txt`);
  });

  it.each(groups)('%s: every flag in a usage line is explained, every explained flag is in the usage, every command has an example', (group) => {
    for (const c of HELP[group].commands as CommandHelp[]) {
      const inUsage = [...c.args.matchAll(/--[a-z-]+/g)].map((m) => m[0]).sort();
      const explained = (c.flags ?? []).map(([f]) => f.replace(/ .*$/, '')).sort();
      expect(explained, `${group} ${c.name}`).toEqual(inUsage);
      expect(c.example.includes(`anmpay ${group} ${c.name}`), `${group} ${c.name} example`).toBe(true);
      expect(renderHelp()).toContain(`anmpay ${group} ${c.name}`);
    }
  });

  it('market scan -q lists every probe outcome the scanner records (DESIGN §5 "Scanner")', () => {
    const scan = HELP.market.commands.find((c) => c.name === 'scan')!;
    const listed = /\(([^)]*)\)/.exec(String(scan.quiet))![1]!.split(', ');
    expect(listed).toEqual(probeOutcome.options);
  });

  it('usage errors show the same lines as the help', () => {
    expect(usageOf('wallet', 'pay')).toBe('anmpay wallet pay <intent_id> --wallet <file> [--amount-nanm <n>] [--fee-nanm <n>] [--force] [--network test|live] [--json | -q]');
    expect(usageOf('devnet', 'mine')).toBe('anmpay devnet mine <n> [--network test|live] [--json]');
    expect(groupUsage('keys')).toBe(`${usageOf('keys', 'create')} | ${usageOf('keys', 'revoke')}`);
    expect(() => usageOf('wallet', 'nosuch')).toThrow(/no help/);
  });
});
