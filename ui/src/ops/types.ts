/**
 * The JSON the console's pages open with and read from `/ops/data/*` and `/ops/streams/*`:
 * the shapes are machines/kit/console-view.ts; here only what a page adds.
 */
import type { ActorRow, JournalEntry, LaidGraph, OutboxRow, Page, TimerRow } from '../../../machines/kit/console-view.ts';

export type { ActorSummary, JournalEntry, LiveState, Overview, Page, TransitionItem, VerifyResult } from '../../../machines/kit/console-view.ts';
export type Chart = LaidGraph;
export type ChartState = LaidGraph['states'][number];
export type ChartEdge = LaidGraph['edges'][number];

export interface ActorDetail extends ActorRow {
  active: string[];
}

export interface ActorPageData {
  csrf: string;
  actor: ActorDetail;
  graph: Chart | null;
  journal: Page<JournalEntry>;
  timers: TimerRow[];
  outbox: OutboxRow[];
}
