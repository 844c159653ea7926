import { z } from 'zod';

/** Named schemas of the HTTP interface; each becomes `#/components/schemas/<id>` in the OpenAPI document. */
export const api = z.registry<{ id: string; description?: string }>();
