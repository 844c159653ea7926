/** Shapes shared by every route: the error envelope (spec "Errors") and health. */
import { z } from 'zod';
import { ERRORS, type ErrorCode } from '../errors.ts';
import { api } from './registry.ts';

export const ErrorEnvelope = z
  .strictObject({
    error: z.strictObject({
      type: z.enum(['invalid_request', 'api_error']),
      code: z.enum(Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      request_id: z.string().min(1),
      retryAfter: z.number().int().min(1).optional().meta({ description: 'Seconds; present with 429.' }),
    }),
  })
  .register(api, { id: 'Error' });

export const Health = z.strictObject({ status: z.string() }).register(api, { id: 'Health' });
