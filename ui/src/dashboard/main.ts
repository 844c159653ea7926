/**
 * Entry of the dashboard bundle (`/assets/dashboard.<hash>.js`): reads the page's JSON data
 * block (CSP allows no inline script) and hands it to `<anm-dashboard>`.
 */
import { setCsrf } from './api.ts';
import './anm-dashboard.ts';
import type { DashPageData } from './types.ts';

const dataEl = document.getElementById('anm-dashboard-data');
const el = document.querySelector('anm-dashboard');
if (dataEl?.textContent && el) {
  const data = JSON.parse(dataEl.textContent) as DashPageData;
  setCsrf(data.csrf);
  el.data = data;
}
