/**
 * Rendered public pages kept per actor version (the link page `/p/{handle}/{slug}`, the invoice
 * page `/i/{token}`). A page is a function of its actor's snapshot and a few fields beside it
 * (the merchant's name, whether an invoice is overdue): the page's read still asks PostgreSQL
 * for the actor's current version on every request, so what a page shows is never older than
 * the database (units left move with every hold), but the snapshot travels and the page is
 * rendered only when the version or those fields changed. The ETag names the rendered bytes,
 * so a client that revalidates gets a 304 without a body.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface PageEntry<R> {
  id: string;
  version: number;
  /** What the page shows besides the snapshot (merchant name, overdue flag): a change renders again. */
  variant: string;
  row: R;
  html: string;
  etag: string;
}

/** The actor a cached page was rendered from, for the read to skip its snapshot when unchanged. */
export interface KnownVersion {
  id: string;
  version: number;
}

export class PageCache<R> {
  private readonly pages = new Map<string, PageEntry<R>>();

  constructor(private readonly max = 2_000) {}

  get(key: string): PageEntry<R> | undefined {
    return this.pages.get(key);
  }

  /**
   * The page at this version and variant: the cached one when it matches, else `render`'s,
   * kept for the next request (unless a newer version is kept already).
   */
  page(key: string, at: Omit<PageEntry<R>, 'html' | 'etag'>, render: (row: R) => string): PageEntry<R> {
    const had = this.pages.get(key);
    if (had && had.id === at.id && had.version === at.version && had.variant === at.variant) return had;
    const html = render(at.row);
    const entry: PageEntry<R> = { ...at, html, etag: `"${createHash('sha1').update(html).digest('base64url')}"` };
    if (had && had.id === at.id && had.version > at.version) return entry;
    // Re-inserting moves the key to the back of the Map's order: the oldest goes first.
    this.pages.delete(key);
    this.pages.set(key, entry);
    if (this.pages.size > this.max) this.pages.delete(this.pages.keys().next().value!);
    return entry;
  }
}

/** Whether the request's If-None-Match names this ETag (weak comparison, RFC 9110 13.1.2). */
export function notModified(req: FastifyRequest, etag: string): boolean {
  const given = req.headers['if-none-match'];
  if (!given) return false;
  if (given.trim() === '*') return true;
  return given.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** A 200 with the page, or a 304 with its headers and no body when the client has these bytes. */
export function sendCached(req: FastifyRequest, reply: FastifyReply, headers: Record<string, string>, page: PageEntry<unknown>): FastifyReply {
  void reply.headers(headers).header('ETag', page.etag);
  if (notModified(req, page.etag)) return reply.code(304).send();
  return reply.code(200).send(page.html);
}
