/**
 * `/widget.js`: opens the hosted checkout of an intent in a modal iframe on a merchant's page.
 *
 *   const anm = AnmPay('apk_test_…');               // a publishable key, never a secret one
 *   anm.open('pay_…', { onSuccess, onCancel, onStatus });
 *
 * It talks to the iframe with postMessage, checking both the origin (this script's origin)
 * and the source window of every message, and addressing its own messages to that origin
 * only. `onSuccess` fires once, when the page reports PAID; nothing earlier counts
 * (detected and confirming are progress). Orders are to be fulfilled from webhooks, not from
 * this callback (spec rule 7). Protocol: docs/widget.md.
 */
import { CHECKOUT_SOURCE, WIDGET_SOURCE, type CheckoutStatusView, type WidgetToCheckout } from '../src/types.ts';

export interface OpenOptions {
  /** Fired once, when the payment is PAID (settled at the required depth). */
  onSuccess?: (payment: { id: string; status: 'PAID'; transaction_hash: string | null }) => void;
  /** Fired when the customer closes the modal before the payment is PAID. */
  onCancel?: (info: { id: string; status: string | null }) => void;
  /** Every status the page shows, for progress display only. */
  onStatus?: (status: CheckoutStatusView) => void;
}

export interface CheckoutHandle {
  close(): void;
}

export interface AnmPayClient {
  open(intentId: string, options?: OpenOptions): CheckoutHandle | null;
}

const PUBLISHABLE = /^apk_(live|test)_[A-Za-z0-9]{32}$/;
const INTENT_ID = /^pay_[a-z2-7]{24}$/;
const LOG = '[ANM Pay widget]';
/** After the iframe loaded: how long the page may take to answer `hello` before we say why it did not. */
const ANSWER_AFTER_LOAD_MS = 3_000;
/** If the iframe never even loads (network): when to offer the new-tab link. */
const READY_TIMEOUT_MS = 10_000;

// The service's origin is this script's own: the widget talks to nothing else.
const scriptSrc = document.currentScript instanceof HTMLScriptElement ? document.currentScript.src : '';
const SERVICE_ORIGIN = scriptSrc ? new URL(scriptSrc).origin : '';

const STYLES = `
  .backdrop { position: fixed; inset: 0; background: rgba(15, 17, 23, 0.6); display: flex; align-items: center; justify-content: center; z-index: 2147483647; }
  .dialog { position: relative; background: #fff; width: min(520px, 100vw); height: min(760px, 100dvh); border-radius: 14px; overflow: hidden; box-shadow: 0 10px 40px rgba(0,0,0,.35); display: flex; flex-direction: column; }
  @media (max-width: 560px) { .dialog { width: 100vw; height: 100dvh; border-radius: 0; } }
  .bar { display: flex; justify-content: space-between; align-items: center; padding: 6px 8px 6px 16px; border-bottom: 1px solid #c9ccd6; font: 600 15px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; color: #1b1b1f; }
  .close { font: inherit; font-size: 22px; line-height: 1; width: 44px; height: 44px; border: 0; border-radius: 8px; background: transparent; color: #1b1b1f; cursor: pointer; }
  .close:hover { background: #eef0f5; }
  .close:focus-visible, iframe:focus-visible, a:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
  iframe { flex: 1; width: 100%; border: 0; }
  .fallback { padding: 16px; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; color: #1b1b1f; }
  .fallback a { color: #0b57d0; font-weight: 600; }
  [hidden] { display: none !important; }
`;

function styleInto(root: ShadowRoot): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    root.adoptedStyleSheets = [sheet];
  } else {
    const style = document.createElement('style');
    style.textContent = STYLES;
    root.append(style);
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function isStatusView(v: unknown): v is CheckoutStatusView {
  return !!v && typeof v === 'object' && typeof (v as { status?: unknown }).status === 'string' && typeof (v as { version?: unknown }).version === 'number';
}

function openCheckout(publishableKey: string, intentId: string, opts: OpenOptions): CheckoutHandle {
  const url = new URL(`/c/${intentId}`, SERVICE_ORIGIN);
  url.searchParams.set('embed', '1');
  url.searchParams.set('pk', publishableKey);

  const previousFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const previousOverflow = document.documentElement.style.overflow;
  const host = el('div', { 'data-anm-pay': intentId });
  const root = host.attachShadow({ mode: 'open' });
  styleInto(root);
  const backdrop = el('div', { class: 'backdrop' });
  const dialog = el('div', { class: 'dialog', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'anm-pay-title' });
  const bar = el('div', { class: 'bar' });
  const title = el('span', { id: 'anm-pay-title' }, 'Pay with ANM');
  const closeBtn = el('button', { class: 'close', type: 'button', 'aria-label': 'Close the checkout' }, '×');
  const frame = el('iframe', { title: 'ANM Pay checkout', src: url.href, allow: 'clipboard-write', referrerpolicy: 'no-referrer' });
  const fallback = el('div', { class: 'fallback', hidden: '' });
  const link = el('a', { href: new URL(`/c/${intentId}`, SERVICE_ORIGIN).href, target: '_blank', rel: 'noopener noreferrer' }, 'Open the checkout in a new tab');
  fallback.append(el('p', {}, 'The checkout could not be shown here.'), link);
  bar.append(title, closeBtn);
  dialog.append(bar, frame, fallback);
  backdrop.append(dialog);
  root.append(backdrop);
  document.body.append(host);
  document.documentElement.style.overflow = 'hidden';

  let ready = false;
  let paid = false;
  let closed = false;
  let lastStatus: string | null = null;

  // One hello per load of the iframe: the page's listener is attached by its module script,
  // which runs before `load`. Repeating it would not help a page the browser refused to frame
  // (its window is then an error page, and every post to it is a console error of its own).
  const hello: WidgetToCheckout = { source: WIDGET_SOURCE, v: 1, type: 'hello', intent: intentId };
  let answerTimer: ReturnType<typeof setTimeout> | undefined;
  let explained = false;
  const giveUp = (why: string): void => {
    if (ready || closed) return;
    fallback.hidden = false;
    if (explained) return;
    explained = true;
    console.error(`${LOG} ${why} The modal offers a link to open the checkout in a new tab instead.`);
  };
  const readyTimer = setTimeout(() => giveUp(`the checkout at ${SERVICE_ORIGIN} did not load within ${READY_TIMEOUT_MS / 1000} s.`), READY_TIMEOUT_MS);
  frame.addEventListener('load', () => {
    if (ready || closed) return;
    frame.contentWindow?.postMessage(hello, SERVICE_ORIGIN);
    clearTimeout(answerTimer);
    answerTimer = setTimeout(
      () =>
        giveUp(
          `the checkout did not answer: this page's origin (${location.origin}) is probably not allowed to embed it, so the browser refused to show it. ` +
            `Add the origin to the merchant's allowed origins (\`anmpay merchant origins <merchant_id> --origin ${location.origin}\`), ` +
            `and check that the publishable key is of the intent's merchant and mode (a test key cannot show a live intent).`,
        ),
      ANSWER_AFTER_LOAD_MS,
    );
  });

  const onMessage = (e: MessageEvent<unknown>): void => {
    // Only the checkout page we opened, from the service's origin.
    if (e.origin !== SERVICE_ORIGIN || e.source !== frame.contentWindow) return;
    const d = e.data as { source?: unknown; v?: unknown; type?: unknown; intent?: unknown; status?: unknown } | null;
    if (!d || typeof d !== 'object' || d.source !== CHECKOUT_SOURCE || d.v !== 1 || d.intent !== intentId) return;
    if (d.type === 'close') {
      close();
      return;
    }
    if ((d.type !== 'ready' && d.type !== 'status') || !isStatusView(d.status)) return;
    ready = true;
    clearTimeout(answerTimer);
    clearTimeout(readyTimer);
    fallback.hidden = true;
    const view = d.status;
    lastStatus = view.status;
    opts.onStatus?.(view);
    if (view.status === 'PAID' && !paid) {
      paid = true;
      opts.onSuccess?.({ id: intentId, status: 'PAID', transaction_hash: view.transaction_hash });
    }
  };

  const onKey = (e: KeyboardEvent): void => {
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    }
  };

  function close(): void {
    if (closed) return;
    closed = true;
    clearTimeout(readyTimer);
    clearTimeout(answerTimer);
    window.removeEventListener('message', onMessage);
    document.removeEventListener('keydown', onKey, true);
    host.remove();
    document.documentElement.style.overflow = previousOverflow;
    previousFocus?.focus();
    if (!paid) opts.onCancel?.({ id: intentId, status: lastStatus });
  }

  window.addEventListener('message', onMessage);
  document.addEventListener('keydown', onKey, true);
  closeBtn.addEventListener('click', close);
  backdrop.addEventListener('click', (e) => {
    if (e.target === backdrop) close();
  });
  // Keep Tab inside the dialog: close button → iframe → close button.
  dialog.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab') return;
    const inside = root.activeElement;
    if (e.shiftKey && inside === closeBtn) {
      e.preventDefault();
      frame.focus();
    } else if (!e.shiftKey && inside === frame) {
      e.preventDefault();
      closeBtn.focus();
    }
  });
  closeBtn.focus();
  return { close };
}

/** Refuses anything but a publishable key, loudly; a refused key is kept nowhere and sent nowhere. */
function AnmPay(publishableKey: unknown): AnmPayClient {
  const refused = (why: string): AnmPayClient => {
    console.error(`${LOG} ${why}`);
    return {
      open() {
        console.error(`${LOG} not opened: the widget was given an unusable key.`);
        return null;
      },
    };
  };
  if (typeof publishableKey === 'string' && publishableKey.startsWith('ask_')) {
    return refused('refused a SECRET key (ask_…). Secret keys must never appear in browser code: revoke this key now and give the widget your publishable key (apk_…).');
  }
  if (typeof publishableKey !== 'string' || !PUBLISHABLE.test(publishableKey)) {
    return refused('needs a publishable key (apk_live_… or apk_test_…).');
  }
  if (!SERVICE_ORIGIN) return refused('could not tell which service it was loaded from; load it with <script src=".../widget.js">.');
  const key = publishableKey;
  return {
    open(intentId: string, options: OpenOptions = {}) {
      if (typeof intentId !== 'string' || !INTENT_ID.test(intentId)) {
        console.error(`${LOG} not a payment intent id: ${String(intentId)}`);
        return null;
      }
      return openCheckout(key, intentId, options);
    },
  };
}

(window as unknown as { AnmPay: typeof AnmPay }).AnmPay = AnmPay;
