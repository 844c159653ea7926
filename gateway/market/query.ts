import type { z } from 'zod';
import { AppError } from '../errors.ts';

/** A query string checked against its schema; anything else is 400 `bad_request` naming the field. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const r = schema.safeParse(query);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new AppError('bad_request', issue ? `${issue.path.join('.') || 'query'}: ${issue.message}` : undefined);
}
