#!/usr/bin/env node
// The CLI is TypeScript run through tsx, so `npx anmpay` works straight from a checkout.
import { register } from 'tsx/esm/api';

register();
await import('../runtime/cli/main.ts');
