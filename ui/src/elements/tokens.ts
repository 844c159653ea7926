/** Shared design tokens of the checkout elements: system fonts only, WCAG AA contrast on white. */
import { css } from 'lit';

export const tokens = css`
  :host {
    --anm-fg: #1b1b1f;
    --anm-muted: #4a4a55;
    --anm-bg: #ffffff;
    --anm-surface: #f4f5f8;
    --anm-border: #c9ccd6;
    --anm-accent: #0b57d0;
    --anm-success: #116329;
    --anm-success-bg: #e6f4ea;
    --anm-warn: #7a4100;
    --anm-warn-bg: #fff4e0;
    --anm-error: #a8200d;
    --anm-error-bg: #fdecea;
    --anm-info-bg: #e8f0fe;
    --anm-radius: 10px;
    font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
    color: var(--anm-fg);
    line-height: 1.45;
  }
  :focus-visible {
    outline: 3px solid var(--anm-accent);
    outline-offset: 2px;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: -1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
  code,
  .mono {
    font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace;
    font-size: 0.9em;
    overflow-wrap: anywhere;
    word-break: break-all;
  }
  button {
    font: inherit;
    min-height: 44px;
    min-width: 44px;
    padding: 0 14px;
    border-radius: 8px;
    border: 1px solid var(--anm-accent);
    background: var(--anm-bg);
    color: var(--anm-accent);
    font-weight: 600;
    cursor: pointer;
  }
  button:hover {
    background: var(--anm-info-bg);
  }
  a {
    color: var(--anm-accent);
  }
`;
