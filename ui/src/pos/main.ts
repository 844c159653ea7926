/**
 * Entry of the point-of-sale bundle (`/assets/pos.<hash>.js`): reads the page's JSON data
 * block (CSP allows no inline script) and hands it to `<anm-pos>`.
 */
import { setCsrf } from './api.ts';
import './anm-pos.ts';
import type { PosPageData } from './api.ts';

const dataEl = document.getElementById('anm-pos-data');
const el = document.querySelector('anm-pos');
if (dataEl?.textContent && el) {
  const data = JSON.parse(dataEl.textContent) as PosPageData;
  setCsrf(data.csrf);
  el.data = data;
  void el.updateComplete.then(() => el.querySelector(':scope > .static')?.remove());
}
