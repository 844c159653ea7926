/**
 * DESIGN §7 "Docs site": "Pages rendered from `docs/*.md` by a kept Markdown library (with its
 * HTML sanitised)". Each row is markup a page might hold; none of it may reach the output as
 * code, and the text around it stays.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown, slug } from './markdown.ts';

const noLinks = () => null;
const render = (src: string) => renderMarkdown(`before\n\n${src}\n\nafter`, noLinks, 'x').html;

const HOSTILE: Array<[string, string, RegExp]> = [
  ['script element', '<script>alert(1)</script>', /<script/i],
  ['event handler', '<img src="/a.png" onerror="alert(1)">', /onerror/i],
  ['html javascript: link', '<a href="javascript:alert(1)">x</a>', /javascript:/i],
  ['markdown javascript: link', '[x](javascript:alert(1))', /href="javascript:/i],
  ['entity-encoded javascript: link', '<a href="jav&#x09;ascript:alert(1)">x</a>', /href="[^"]*script:/i],
  ['data: link', '[x](data:text/html;base64,PHNjcmlwdD4=)', /href="data:/i],
  ['vbscript: link', '<a href="vbscript:msgbox(1)">x</a>', /vbscript/i],
  ['remote image (a beacon)', '<img src="https://tracker.example/p.gif">', /tracker\.example/],
  ['iframe', '<iframe src="/docs"></iframe>', /<iframe/i],
  ['object/embed', '<object data="/x"></object><embed src="/x">', /<object|<embed/i],
  ['form and input', '<form action="/x"><input name="q"></form>', /<form|<input/i],
  ['style element', '<style>body{display:none}</style>', /<style/i],
  ['style attribute', '<p style="background:url(/x)">p</p>', /style=/i],
  ['svg with script', '<svg><script>alert(1)</script></svg>', /<svg|<script/i],
  ['meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">', /<meta|evil/i],
  ['base element', '<base href="https://evil.example/">', /<base|evil/i],
];

describe('renderMarkdown sanitises', () => {
  it.each(HOSTILE)('%s', (_name, src, forbidden) => {
    const html = render(src);
    expect(html).not.toMatch(forbidden);
    expect(html).toContain('<p>before</p>');
    expect(html).toContain('<p>after</p>');
  });

  it('keeps ordinary Markdown: code, tables, links to the site and the web, details', () => {
    const html = render('`a<b>`\n\n| h |\n|---|\n| c |\n\n[site](/docs/errors) [web](https://example.com)\n\n<details><summary>s</summary>d</details>');
    expect(html).toContain('<code>a&lt;b&gt;</code>');
    expect(html).toContain('<table>');
    expect(html).toContain('href="/docs/errors"');
    expect(html).toContain('href="https://example.com"');
    expect(html).toContain('<details><summary>s</summary>d</details>');
  });
});

describe('renderMarkdown structure', () => {
  it('gives headings GitHub-style ids, numbered when repeated, and splits sections at h2', () => {
    const r = renderMarkdown('# Title\n\nintro\n\n## Verifying a delivery\n\ntext one\n\n## Verifying a delivery\n\ntext two', noLinks, 'x');
    expect(r.title).toBe('Title');
    expect(r.html).toContain('<h2 id="verifying-a-delivery">');
    expect(r.html).toContain('<h2 id="verifying-a-delivery-1">');
    expect(r.sections.map((s) => s.anchor)).toEqual(['', 'verifying-a-delivery', 'verifying-a-delivery-1']);
    expect(r.sections[1]!.text).toContain('text one');
    expect(slug('`payment.*` events')).toBe('payment-events');
  });

  it('resolves page links through the resolver and turns unresolved ones into text', () => {
    const r = renderMarkdown('[a](a.md#x) [b](../b.ts)', (href) => (href.startsWith('a.md') ? '/docs/a#x' : null), 'x');
    expect(r.html).toContain('<a href="/docs/a#x">a</a>');
    expect(r.html).toContain('<span>b</span>');
    expect(r.html).not.toContain('b.ts');
  });
});
