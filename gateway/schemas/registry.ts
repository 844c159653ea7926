import { z } from 'zod';
import { codePoints } from '../../machines/kit/text.ts';

/** Named schemas of the HTTP interface; each becomes `#/components/schemas/<id>` in the OpenAPI document. */
export const api = z.registry<{ id: string; description?: string }>();

/**
 * A string of `min`-`max` characters counted as Unicode code points (the spec's "chars";
 * `z.string().max` would count UTF-16 units). JSON Schema's min/maxLength count code points too.
 */
export function chars(max: number, min = 0): z.ZodString {
  return z
    .string()
    .refine((s) => {
      const n = codePoints(s);
      return n >= min && n <= max;
    }, `must be ${min}-${max} characters`)
    .meta(min > 0 ? { minLength: min, maxLength: max } : { maxLength: max });
}
