/** What the console's elements share: the checkout's tokens, tables, buttons and badges. */
import { css } from 'lit';
import { tokens } from '../elements/tokens.ts';

export const opsStyles = [
  tokens,
  css`
    :host {
      display: block;
      font-size: 14px;
    }
    h2 {
      font-size: 16px;
      margin: 20px 0 8px;
    }
    table {
      border-collapse: collapse;
      width: 100%;
      font-variant-numeric: tabular-nums;
    }
    th,
    td {
      text-align: left;
      padding: 4px 8px;
      border-bottom: 1px solid var(--anm-border);
      vertical-align: top;
    }
    th {
      background: var(--anm-surface);
      font-weight: 600;
    }
    code,
    .mono {
      font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
      font-size: 12px;
      overflow-wrap: anywhere;
    }
    button {
      font: inherit;
      padding: 6px 14px;
      border-radius: 6px;
      border: 1px solid var(--anm-accent);
      background: var(--anm-accent);
      color: #fff;
      cursor: pointer;
    }
    button.secondary {
      background: #fff;
      color: var(--anm-accent);
    }
    button:disabled {
      opacity: 0.6;
      cursor: default;
    }
    .badge {
      display: inline-block;
      padding: 1px 8px;
      border-radius: 10px;
      background: var(--anm-info-bg);
      font-size: 12px;
    }
    .ok {
      background: var(--anm-success-bg);
      color: var(--anm-success);
    }
    .bad {
      background: var(--anm-error-bg);
      color: var(--anm-error);
    }
    .muted {
      color: var(--anm-muted);
    }
    .cards {
      display: grid;
      grid-template-columns: repeat(auto-fill, minmax(180px, 1fr));
      gap: 12px;
    }
    .card {
      border: 1px solid var(--anm-border);
      border-radius: var(--anm-radius);
      padding: 10px 12px;
    }
    .card .n {
      font-size: 22px;
      font-weight: 600;
    }
    a {
      color: var(--anm-accent);
    }
    @media (max-width: 700px) {
      table {
        display: block;
        overflow-x: auto;
      }
    }
  `,
];

export const when = (iso: string | null): string => (iso ? new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—');
export const lag = (ms: number | null): string => (ms === null ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);
