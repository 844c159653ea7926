/**
 * The browser code, served by the project itself (no CDN): `/assets/<name>.<hash>.<ext>`
 * (immutable: the name changes with the bytes) and `/widget.js` (a stable URL merchants
 * embed: ETag + `max-age=300`, 304 on a matching If-None-Match; spec Limits "Widget script
 * cache"). Built once per process on first use (ui/build.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { uiBundle, type Asset } from '../../ui/build.ts';
import { AppError } from '../errors.ts';

export const WIDGET_MAX_AGE = 300;

/** RFC 9110 If-None-Match: weak comparison, a list, or `*`. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || strip(t) === strip(etag));
}

/** An asset with its ETag, answering 304 to a matching If-None-Match. */
export function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string, corp: string): FastifyReply {
  void reply.headers({
    ETag: a.etag,
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Resource-Policy': corp,
  });
  if (etagMatches(req.headers['if-none-match'], a.etag)) return reply.code(304).send();
  return reply.code(200).type(a.contentType).send(a.body);
}

export default async function assets(app: FastifyInstance): Promise<void> {
  app.get('/widget.js', async (req, reply) => {
    const b = await uiBundle();
    // Merchant pages on other origins load it as a classic script.
    return sendAsset(req, reply, b.widgetJs, `public, max-age=${WIDGET_MAX_AGE}`, 'cross-origin');
  });

  app.get<{ Params: { file: string } }>('/assets/:file', async (req, reply) => {
    const b = await uiBundle();
    const a = [b.checkoutJs, b.pageCss, b.icon, b.docsCss, b.opsJs, b.opsCss, b.dashboardJs, b.dashboardCss, b.posJs, b.posCss].find((x) => x.path === `/assets/${req.params.file}`);
    if (!a) throw new AppError('not_found');
    return sendAsset(req, reply, a, 'public, max-age=31536000, immutable', 'same-origin');
  });
}
