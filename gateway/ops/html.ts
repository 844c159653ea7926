/**
 * HTML of the operator console: one shell for every page (the ops bundle, the page's data as
 * JSON in a non-executable block, a title), with the checkout's escaping and headers (strict
 * CSP, no inline script, no framing).
 */
import { esc, jsonForScript } from '../checkout/html.ts';

export interface OpsAssets {
  js: string;
  css: string;
  icon: string;
}

export type OpsView = 'login' | 'overview' | 'actors' | 'actor';

const NAV: Array<[OpsView, string, string]> = [
  ['overview', '/ops', 'Overview'],
  ['actors', '/ops/actors', 'Actors'],
];

export function opsHtml(view: OpsView, title: string, data: unknown, assets: OpsAssets, loggedIn: boolean): string {
  const nav = loggedIn
    ? `<nav aria-label="Console">${NAV.map(([v, href, label]) => `<a href="${href}"${v === view ? ' aria-current="page"' : ''}>${label}</a>`).join('')}<anm-ops-logout></anm-ops-logout></nav>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)} · ANM Pay operator console</title>
<link rel="icon" href="${esc(assets.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${esc(assets.css)}">
<script type="module" src="${esc(assets.js)}"></script>
</head>
<body>
<header><a class="brand" href="/ops">ANM Pay · operator console</a>${nav}</header>
<main id="ops-main" data-view="${esc(view)}"><noscript>The operator console needs JavaScript.</noscript></main>
<script type="application/json" id="anm-ops-data">${jsonForScript(data)}</script>
</body>
</html>
`;
}
