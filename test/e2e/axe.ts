/** axe-core's WCAG 2 A and AA rules run in a page; returns one line per violation (none: []). */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';

let source: Promise<string> | undefined;

/** The page's context must bypass CSP (`bypassCSP: true`) for the script to be injected. */
export async function axe(page: Page): Promise<string[]> {
  source ??= readFile(path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: await source });
  return page.evaluate(async () => {
    const w = window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown }> }> }> } };
    const r = await w.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return r.violations.map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);
  });
}
