import type { SnapshotFeed } from '../../runtime/engine/snapshot-feed.ts';
import type { OpsConsole } from '../../runtime/ops/console.ts';
import type { LoginLimits } from '../../runtime/sessions/login-limits.ts';
import type { SessionStore } from '../../runtime/sessions/store.ts';

/** What the operator console (`/ops` pages, data and streams) needs besides the operator token. */
export interface OpsConsoleDeps {
  console: OpsConsole;
  /** The engine's snapshot feed: live statecharts and overview without polling. */
  feed: Pick<SnapshotFeed, 'subscribe' | 'subscribeAll'> & Partial<Pick<SnapshotFeed, 'ready'>>;
  sessions: SessionStore;
  /** Failed logins per address (5 per 15 min, then 429). */
  loginLimits?: LoginLimits;
  /** Overview refresh tuning (tests shorten it). */
  overview?: { minRefreshMs?: number; idleRefreshMs?: number };
}
