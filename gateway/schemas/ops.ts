/** Operator API shapes (`/ops/api`, operator token): merchants and keys for the CLI. */
import { z } from 'zod';
import { modeEnum } from './payment-intent.ts';
import { api } from './registry.ts';

// An http(s) origin, or a loopback one with a `*` port (`http://localhost:*`); the store
// normalises and refuses anything else as invalid_origin (runtime/merchant/origins.ts).
const originEntry = z.string().min(1).max(2048).describe('An http(s) origin such as https://shop.example; http://127.0.0.1:* and http://localhost:* (any port) are honoured in test mode only.');

const keyPair = z.strictObject({ secret: z.string(), publishable: z.string() });

export const CreateMerchantRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    email: z.email().max(254).optional(),
    password: z.string().min(12).max(200).optional(),
    success_url: z.url({ protocol: /^https?$/ }).max(2048).optional(),
    cancel_url: z.url({ protocol: /^https?$/ }).max(2048).optional(),
    allowed_origins: z.array(originEntry).max(50).optional(),
  })
  .register(api, { id: 'CreateMerchantRequest' });

export const CreatedMerchant = z
  .strictObject({
    merchant_id: z.string(),
    handle: z.string(),
    dashboard: z.strictObject({ email: z.string(), password: z.string() }),
    keys: z.strictObject({ test: keyPair, live: keyPair }),
  })
  .register(api, { id: 'CreatedMerchant' });

export const CreateKeyRequest = z
  .strictObject({ mode: modeEnum, kind: z.enum(['secret', 'publishable']).default('secret') })
  .register(api, { id: 'CreateKeyRequest' });

export const CreatedKey = z
  .strictObject({
    id: z.string(),
    merchant: z.string(),
    mode: modeEnum,
    kind: z.enum(['secret', 'publishable']),
    key: z.string(),
    prefix: z.string(),
  })
  .register(api, { id: 'CreatedKey' });

export const RevokeKeyRequest = z.strictObject({ key: z.string().min(1).max(200) }).register(api, { id: 'RevokeKeyRequest' });

export const RevokedKey = z.strictObject({ id: z.string(), revoked_at: z.iso.datetime() }).register(api, { id: 'RevokedKey' });

export const MerchantStatus = z
  .strictObject({ id: z.string(), status: z.enum(['active', 'suspended']) })
  .register(api, { id: 'MerchantStatus' });

export const SetAllowedOriginsRequest = z
  .strictObject({ origins: z.array(originEntry).max(50) })
  .register(api, { id: 'SetAllowedOriginsRequest' });

export const AllowedOrigins = z.strictObject({ id: z.string(), allowed_origins: z.array(z.string()) }).register(api, { id: 'AllowedOrigins' });

/** `POST /ops/api/merchants/{id}/payout` (`anmpay payout set`). */
export const SetPayoutRequest = z.strictObject({ mode: z.enum(['test', 'live']), address: z.string().min(1).max(200) }).register(api, { id: 'SetPayoutRequest' });
