/**
 * Entry of the checkout bundle (`/assets/checkout.<hash>.js`, loaded by `/c/{id}`). Reads the
 * page's JSON data block (CSP allows no inline script), hands it to `<anm-checkout>`, and in
 * `embed=1` mode bridges status changes to the widget's window.
 */
import { EmbedBridge } from './embed-bridge.ts';
import './elements/anm-checkout.ts';
import type { CheckoutPageData } from './types.ts';

const dataEl = document.getElementById('anm-checkout-data');
const el = document.querySelector('anm-checkout');
if (dataEl?.textContent && el) {
  const data = JSON.parse(dataEl.textContent) as CheckoutPageData;
  if (data.embed) {
    const bridge = new EmbedBridge(data.intent.id, data.embed.origins, data.status, data.intent.mode === 'test');
    el.addEventListener('anm-status-change', (e) => bridge.status(e.detail));
    el.addEventListener('anm-done', () => bridge.close());
    // Keys pressed in the iframe never reach the merchant's page: Escape is passed on as a close.
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') bridge.close();
    });
  }
  el.data = data;
  // The static summary served for the first paint (and no-JS readers) is not needed any more.
  void el.updateComplete.then(() => el.querySelector(':scope > .static')?.remove());
}
