/**
 * The import-direction lint (eslint.config.js) as the project's own config applies it: every
 * upward import is an error, every downward one passes. STYLE.md "Layout tells the
 * architecture"; the house has no eslint-disable for import rules (checked below too).
 */
import { execFileSync } from 'node:child_process';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });
const RULE = '@typescript-eslint/no-restricted-imports';

/** Lints one import line as if it were in `file`, with that file's import rule from the real config. */
async function verdict(file: string, line: string): Promise<'error' | 'ok'> {
  const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> };
  const setting = config.rules?.[RULE];
  if (setting === undefined) return 'ok';
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    line,
    [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { '@typescript-eslint': tseslint.plugin }, rules: { [RULE]: setting as Linter.RuleEntry } }],
    file,
  );
  return messages.some((m) => m.ruleId === RULE) ? 'error' : 'ok';
}

const cases: Array<[file: string, line: string, expected: 'error' | 'ok']> = [
  // machines/: nothing of ours
  ['machines/payment-intent/machine.ts', "import { x } from '../../runtime/config.ts';", 'error'],
  ['machines/payment-intent/machine.ts', "import { x } from '../../storage/db.ts';", 'error'],
  ['machines/payment-intent/machine.ts', "import { x } from '../../gateway/app.ts';", 'error'],
  ['machines/payment-intent/machine.ts', "import { x } from '../../bin/services.ts';", 'error'],
  ['machines/payment-intent/machine.ts', "import { x } from '../money/anm.ts';", 'ok'],
  // storage/: machines/ only
  ['storage/open.ts', "import { x } from '../runtime/config.ts';", 'error'],
  ['storage/open.ts', "import type { X } from '../gateway/deps.ts';", 'error'],
  ['storage/open.ts', "import { x } from '../machines/money/anm.ts';", 'ok'],
  // runtime/: machines/ and storage/
  ['runtime/engine/runtime.ts', "import { x } from '../../gateway/server.ts';", 'error'],
  ['runtime/engine/runtime.ts', "import type { X } from '../../gateway/deps.ts';", 'error'],
  ['runtime/engine/runtime.ts', "import { x } from '../../ui/build.ts';", 'error'],
  ['runtime/engine/runtime.ts', "import { x } from '../../bin/services.ts';", 'error'],
  ['runtime/engine/runtime.ts', "import { x } from '../../storage/db.ts';", 'ok'],
  ['runtime/engine/runtime.ts', "import { x } from '../../machines/money/anm.ts';", 'ok'],
  // gateway/: runtime/ and machines/; from ui/ the built assets and page types only
  ['gateway/app.ts', "import { x } from '../bin/services.ts';", 'error'],
  ['gateway/app.ts', "import type { Db } from '../storage/db.ts';", 'error'],
  ['gateway/checkout/page.ts', "import { x } from '../../ui/src/checkout/element.ts';", 'error'],
  ['gateway/checkout/page.ts', "import { uiBundle } from '../../ui/build.ts';", 'ok'],
  ['gateway/checkout/page.ts', "import type { CheckoutPageData } from '../../ui/src/types.ts';", 'ok'],
  ['gateway/app.ts', "import { x } from '../runtime/config.ts';", 'ok'],
  // ui/: machines/ only
  ['ui/src/types.ts', "import { x } from '../../runtime/config.ts';", 'error'],
  ['ui/src/types.ts', "import { x } from '../../gateway/app.ts';", 'error'],
  ['ui/src/types.ts', "import type { X } from '../../machines/payment-intent/checkout-view.ts';", 'ok'],
  // bin/: the composition root imports everything below it
  ['bin/services.ts', "import { x } from '../gateway/server.ts';", 'ok'],
  ['bin/services.ts', "import { x } from '../storage/open.ts';", 'ok'],
];

describe('import direction (eslint.config.js)', () => {
  it.each(cases)('%s: %s -> %s', async (file, line, expected) => {
    expect(await verdict(file, line)).toBe(expected);
  });

  it('no eslint-disable switches an import rule off anywhere in the source', () => {
    // git grep exits 1 when nothing matches; the pattern is built so this line does not match itself.
    const pattern = `eslint-${'disable'}.*restricted-${'imports'}`;
    let hits = '';
    try {
      hits = execFileSync('git', ['grep', '-nE', pattern, '--', '*.ts', '*.js'], { encoding: 'utf8' });
    } catch (err) {
      if ((err as { status?: number }).status !== 1) throw err;
    }
    expect(hits).toBe('');
  });
});
