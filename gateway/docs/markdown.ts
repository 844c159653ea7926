/**
 * Markdown to safe HTML for the docs site: markdown-it renders (raw HTML allowed, so a page
 * may use `<details>`), then sanitize-html keeps an allowlist of tags, attributes and URL
 * schemes. Whatever a page holds (a `<script>`, an `onerror`, a `javascript:` link), the
 * output carries none of it. Links between docs files become `/docs/{page}` URLs; links to
 * repository files outside the site are kept as text, since the site cannot serve them.
 */
import MarkdownIt, { type Token } from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/** Resolves a link found in a page to a site URL, null when it is no page of the site. */
export type LinkResolver = (href: string) => string | null;

export interface Rendered {
  html: string;
  title: string;
  /** Second-level sections (for search): heading, its anchor and its plain text. */
  sections: { heading: string; anchor: string; text: string }[];
}

/** GitHub-style heading ids, so `webhooks.md#verifying-a-delivery` keeps working on the site. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'details', 'summary', 'del', 'ins', 'sup', 'sub'],
  allowedAttributes: {
    a: ['href', 'title', 'id'],
    img: ['src', 'alt', 'title'],
    code: ['class'],
    th: ['style', 'align'],
    td: ['style', 'align'],
    '*': ['id'],
  },
  allowedStyles: { '*': { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  // Images only from the site itself: a remote image is a tracking beacon, and the CSP refuses it anyway.
  allowedSchemesByTag: { img: [] },
};

const md = new MarkdownIt({ html: true, linkify: true, typographer: false });

function inlineText(tokens: Token[] | null): string {
  return (tokens ?? []).map((t) => (t.type === 'text' || t.type === 'code_inline' ? t.content : inlineText(t.children))).join('');
}

/** Renders one page; `resolve` maps each link target (relative to the page's own file). */
export function renderMarkdown(source: string, resolve: LinkResolver, fallbackTitle: string): Rendered {
  const env = {};
  const tokens = md.parse(source, env);
  let title = '';
  const sections: Rendered['sections'] = [];
  const used = new Map<string, number>();
  let current: Rendered['sections'][number] | null = null;
  const intro = { heading: '', anchor: '', text: '' };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === 'heading_open') {
      const text = inlineText(tokens[i + 1]?.children ?? null);
      const base = slug(text);
      const n = used.get(base) ?? 0;
      used.set(base, n + 1);
      const id = n === 0 ? base : `${base}-${n}`;
      t.attrSet('id', id);
      if (t.tag === 'h1' && !title) title = text;
      if (t.tag === 'h2') sections.push((current = { heading: text, anchor: id, text: '' }));
      continue;
    }
    if (t.type === 'inline' || t.type === 'fence' || t.type === 'code_block') {
      const text = t.type === 'inline' ? inlineText(t.children) : t.content;
      (current ?? intro).text += `${text}\n`;
      if (t.children) rewriteLinks(t.children, resolve);
    }
  }
  if (intro.text.trim()) sections.unshift(intro);
  const html = sanitizeHtml(md.renderer.render(tokens, md.options, env), SANITIZE);
  return { html, title: title || fallbackTitle, sections };
}

/** Page links become site URLs; a link to a file the site does not serve becomes its text. */
function rewriteLinks(children: Token[], resolve: LinkResolver): void {
  const open: boolean[] = [];
  for (const c of children) {
    if (c.type === 'link_open') {
      const href = String(c.attrGet('href') ?? '');
      // Absolute URLs, site paths and same-page anchors are kept (the sanitiser vets schemes).
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) {
        open.push(true);
        continue;
      }
      const to = resolve(href);
      if (to === null) {
        // Turned into a span: its text stays, the dead link goes.
        c.tag = 'span';
        c.attrs = null;
        open.push(false);
      } else {
        c.attrSet('href', to);
        open.push(true);
      }
    } else if (c.type === 'link_close') {
      if (open.pop() === false) c.tag = 'span';
    }
  }
}
