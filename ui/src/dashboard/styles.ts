/** Styles the dashboard's page elements share, over the checkout's tokens. */
import { css } from 'lit';
import { tokens } from '../elements/tokens.ts';

export const dashStyles = [
  tokens,
  css`
    :host {
      display: block;
    }
    h1 {
      font-size: 1.4rem;
      margin: 0 0 12px;
    }
    h2 {
      font-size: 1.1rem;
      margin: 20px 0 8px;
    }
    section,
    .card {
      background: var(--anm-bg);
      border: 1px solid var(--anm-border);
      border-radius: var(--anm-radius);
      padding: 14px 16px;
      margin: 0 0 16px;
    }
    label {
      display: block;
      font-weight: 600;
      margin: 10px 0 4px;
    }
    input,
    select,
    textarea {
      font: inherit;
      box-sizing: border-box;
      width: 100%;
      min-height: 44px;
      padding: 8px 10px;
      border: 1px solid var(--anm-muted);
      border-radius: 8px;
      color: var(--anm-fg);
      background: var(--anm-bg);
    }
    .row {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: flex-end;
    }
    .row > * {
      flex: 1 1 140px;
    }
    .row > button {
      flex: 0 0 auto;
    }
    button.primary {
      background: var(--anm-accent);
      color: #ffffff;
    }
    button.danger {
      border-color: var(--anm-error);
      color: var(--anm-error);
    }
    .table {
      width: 100%;
      overflow-x: auto;
    }
    table {
      width: 100%;
      border-collapse: collapse;
      font-size: 0.95rem;
    }
    th,
    td {
      text-align: left;
      padding: 8px 6px;
      border-bottom: 1px solid var(--anm-border);
      vertical-align: top;
    }
    th {
      color: var(--anm-muted);
      font-weight: 600;
    }
    .error {
      color: var(--anm-error);
      background: var(--anm-error-bg);
      padding: 8px 10px;
      border-radius: 8px;
    }
    .notice {
      background: var(--anm-warn-bg);
      color: var(--anm-warn);
      padding: 8px 10px;
      border-radius: 8px;
    }
    .muted {
      color: var(--anm-muted);
    }
    .status {
      font-weight: 600;
    }
    dl {
      display: grid;
      grid-template-columns: minmax(120px, max-content) 1fr;
      gap: 4px 12px;
      margin: 0;
    }
    dt {
      color: var(--anm-muted);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    @media (max-width: 600px) {
      dl {
        grid-template-columns: 1fr;
      }
      dd {
        margin-bottom: 6px;
      }
    }
  `,
];
