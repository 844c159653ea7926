/**
 * Entry of the operator console bundle (`/assets/ops.<hash>.js`). Reads the page's JSON data
 * block (CSP allows no inline script), sets the CSRF token for writes, and mounts the
 * element of the page's view with the data it opened with.
 */
import { setCsrf } from './api.ts';
import './anm-ops-actor.ts';
import './anm-ops-actors.ts';
import './anm-ops-login.ts';
import './anm-ops-overview.ts';
import type { ActorFilter } from './anm-ops-actors.ts';
import type { ActorPageData, ActorSummary, Overview, Page } from './types.ts';

const main = document.getElementById('ops-main');
const raw = document.getElementById('anm-ops-data')?.textContent;
if (main && raw) {
  const data = JSON.parse(raw) as { csrf: string } & Record<string, unknown>;
  setCsrf(data.csrf);
  let el: HTMLElement;
  switch (main.dataset.view) {
    case 'login':
      el = document.createElement('anm-ops-login');
      break;
    case 'overview': {
      const o = document.createElement('anm-ops-overview');
      o.overview = data.overview as Overview;
      el = o;
      break;
    }
    case 'actors': {
      const a = document.createElement('anm-ops-actors');
      a.kinds = data.kinds as string[];
      a.filter = data.filter as ActorFilter;
      a.pages = [data.page as Page<ActorSummary>];
      el = a;
      break;
    }
    default: {
      if (typeof data.missing === 'string') {
        el = document.createElement('p');
        el.textContent = `No actor ${data.missing}.`;
        break;
      }
      const a = document.createElement('anm-ops-actor');
      a.data = data as unknown as ActorPageData;
      el = a;
    }
  }
  main.replaceChildren(el);
}
