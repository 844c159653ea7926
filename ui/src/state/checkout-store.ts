/**
 * Page-local state of the checkout (nothing the server decides): which value was just copied,
 * and whether the payment details are expanded. Elements send events; `anm-checkout` reads.
 */
import { createStore } from '@xstate/store';

export type CopyField = 'uri' | 'total' | 'address' | 'amount' | 'fee' | 'fee_to' | 'reference';

export interface CheckoutLocal {
  copied: CopyField | null;
  /** Copy failed (no clipboard permission): the value was selected for a manual copy instead. */
  copyFailed: CopyField | null;
  /** Null until the customer toggles them: then anm-checkout's default applies. */
  detailsOpen: boolean | null;
}

export function createCheckoutStore() {
  const context: CheckoutLocal = { copied: null, copyFailed: null, detailsOpen: null };
  return createStore({
    context,
    on: {
      copied: (ctx, e: { field: CopyField }) => ({ ...ctx, copied: e.field, copyFailed: null }),
      copyFailed: (ctx, e: { field: CopyField }) => ({ ...ctx, copied: null, copyFailed: e.field }),
      copyCleared: (ctx) => ({ ...ctx, copied: null, copyFailed: null }),
      detailsToggled: (ctx, e: { open: boolean }) => ({ ...ctx, detailsOpen: e.open }),
    },
  });
}

export type CheckoutStore = ReturnType<typeof createCheckoutStore>;
